package index

// searchExhaustive is the reference the pruned evaluation is tested
// against (Query.Exhaustive): the evaluation Search did before it pruned,
// term at a time into a dense accumulator, scoring every posting of every
// term and counting every document it touched. O(documents) in memory.
func (ix *Index) searchExhaustive(q *Query, k int, sc *scratch) Result {
	removed := ix.removed(q, sc)
	if len(q.Terms) == 0 && len(q.Phrases) == 0 {
		return ix.browse(q, removed, k)
	}
	st := ix.statsFor(q)
	k1, b := float32(ix.opts.K1), float32(ix.opts.B)
	nm := norms{norm0: k1 * (1 - b), normL: k1 * b / float32(st.avgLen)}
	acc := make([]float32, len(ix.lens))
	touched := make([]bool, len(ix.lens))
	req := make([]int, len(ix.lens))
	for _, ph := range q.Phrases {
		docs, pfs := ix.phrase(ph, sc)
		if len(docs) == 0 {
			return Result{}
		}
		w := float32(idf(st.n, float64(st.phraseDF(docs)))) * (k1 + 1)
		for i, id := range docs {
			acc[id] += nm.score(w, float32(pfs[i]), ix.lens[id])
			touched[id] = true
			req[id]++
		}
	}
	var typos []TypoUse
	for _, t := range ix.rarest(q.Terms, MaxTerms, &st) {
		if t.Weight <= 0 {
			continue
		}
		members, u, ok := ix.group(q, &t, &st)
		if ok {
			typos = append(typos, u)
		}
		best := map[uint32]float32{}
		for _, m := range members {
			ix.lists[m.li].postings(func(id uint32, tf uint8, _ uint32) {
				if v := nm.score(m.w, float32(tf), ix.lens[id]); v > best[id] {
					best[id] = v
				}
			})
		}
		for id, v := range best {
			acc[id] += v
			touched[id] = true
		}
	}
	var top topK
	top.init(k, q.Recency, q.Tie)
	total := 0
	for id := range acc {
		id := uint32(id)
		if !touched[id] || req[id] != len(q.Phrases) || ix.lens[id] == 0 ||
			(removed != nil && removed.Contains(id)) || (q.Filter != nil && !q.Filter.Contains(id)) ||
			(q.Accept != nil && !q.Accept(id)) {
			continue
		}
		total++
		top.offer(id, acc[id])
	}
	return Result{Hits: top.sorted(), Total: total, Typos: typos}
}
