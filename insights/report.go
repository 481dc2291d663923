package insights

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Callers selects whose searches and questions a report counts.
type Callers uint8

const (
	All           Callers = iota // everyone
	Public                       // callers without credentials
	Authenticated                // callers with admin Basic Auth or the Bearer token
)

// ParseCallers reads "all" (or ""), "public" or "authenticated".
func ParseCallers(s string) (Callers, error) {
	switch s {
	case "", "all":
		return All, nil
	case "public":
		return Public, nil
	case "authenticated":
		return Authenticated, nil
	}
	return All, fmt.Errorf("callers must be all, public or authenticated, not %q", s)
}

func (c Callers) String() string { return [...]string{"all", "public", "authenticated"}[c] }

func (c Callers) counts(auth bool) bool { return c == All || (c == Authenticated) == auth }

// Query is what a report covers.
type Query struct {
	Days    int // the latest Days days, today (UTC) included; at least 1
	Callers Callers
	Limit   int // entries per list; default MaxListed
}

// MaxListed is how many entries a report's lists hold at most.
const MaxListed = 100

// Report is what was searched and asked over a window of days.
type Report struct {
	Days     int
	Callers  Callers
	From, To time.Time // the first and last day of the window (midnight UTC)
	Searches int       // searches, all endpoints
	Asks     int       // questions, all endpoints
	Daily    []Day     // each day of the window, oldest first
	// TopQueries are the searches made most often; ZeroResultQueries
	// those that most often found nothing (Count: how often they did);
	// TopQuestions the questions asked most often; UnansweredQuestions
	// those whose answer most often found no source. Each list is most
	// frequent first, then most recent, then by text.
	TopQueries          []Entry
	ZeroResultQueries   []Entry
	TopQuestions        []Entry
	UnansweredQuestions []Entry
	// Dropped counts the events this process dropped since it started
	// (its buffer was full).
	Dropped int64
}

// Day is one day's volume.
type Day struct {
	Date            time.Time
	Searches, Asks  int
	NoResults       int // searches that found nothing
	Unanswered      int // questions whose answer found no source
	Public, Private int // of all, by callers without and with credentials
}

// Entry is a text of a list and how often it counts there.
type Entry struct {
	Text                string
	Count               int
	FirstSeen, LastSeen time.Time      // the first and last day it counted (midnight UTC)
	Authenticated       int            // of Count, by callers with credentials
	Endpoints           map[string]int // Count by endpoint
}

// tally accumulates an entry.
type tally struct {
	n, auth     int
	first, last int32
	eps         [len(endpointNames)]int
}

func (t *tally) add(k *key, n uint32) {
	if n == 0 {
		return
	}
	if t.n == 0 || k.day < t.first {
		t.first = k.day
	}
	if t.n == 0 || k.day > t.last {
		t.last = k.day
	}
	t.n += int(n)
	if k.auth {
		t.auth += int(n)
	}
	if int(k.ep) < len(t.eps) {
		t.eps[k.ep] += int(n)
	}
}

func (t *tally) entry(text string) Entry {
	e := Entry{Text: text, Count: t.n, FirstSeen: dayTime(t.first), LastSeen: dayTime(t.last), Authenticated: t.auth,
		Endpoints: map[string]int{}}
	for ep, n := range t.eps {
		if n > 0 {
			e.Endpoints[Endpoint(ep).String()] = n
		}
	}
	return e
}

func dayTime(d int32) time.Time { return time.Unix(int64(d)*86400, 0).UTC() }

// EmptyReport is the report of a window with nothing recorded, as of now.
func EmptyReport(q Query, now time.Time) Report {
	q.Days = max(q.Days, 1)
	to := dayOf(now)
	from := to - int32(q.Days) + 1
	rep := Report{Days: q.Days, Callers: q.Callers, From: dayTime(from), To: dayTime(to), Daily: make([]Day, q.Days),
		TopQueries: []Entry{}, ZeroResultQueries: []Entry{}, TopQuestions: []Entry{}, UnansweredQuestions: []Entry{}}
	for i := range rep.Daily {
		rep.Daily[i].Date = dayTime(from + int32(i))
	}
	return rep
}

// Report reports on the latest q.Days days, as of the events recorded
// before the call. O(entries) under the read lock, then O(texts log
// texts) to rank them.
func (r *Recorder) Report(q Query) Report {
	r.sync()
	rep := EmptyReport(q, r.opts.Now())
	rep.Dropped = r.Dropped()
	if q.Limit <= 0 {
		q.Limit = MaxListed
	}
	from, to := dayOf(rep.From), dayOf(rep.To)
	// Per kind (searches, then questions) and text: all the times, and
	// those it missed (found nothing; found no source).
	type tallies struct{ all, missed tally }
	texts := [2]map[string]*tallies{{}, {}}
	r.mu.RLock()
	for k, c := range r.tab.entries {
		if k.day < from || k.day > to || !q.Callers.counts(k.auth) {
			continue
		}
		if k.text == "" {
			d := &rep.Daily[k.day-from]
			if k.ask {
				d.Asks += int(c.n)
				d.Unanswered += int(c.unanswered)
			} else {
				d.Searches += int(c.n)
				d.NoResults += int(c.none)
			}
			if k.auth {
				d.Private += int(c.n)
			} else {
				d.Public += int(c.n)
			}
			continue
		}
		kind, missed := 0, c.none
		if k.ask {
			kind, missed = 1, c.unanswered
		}
		t := texts[kind][k.text]
		if t == nil {
			t = &tallies{}
			texts[kind][k.text] = t
		}
		t.all.add(&k, c.n)
		t.missed.add(&k, missed)
	}
	r.mu.RUnlock()
	for _, d := range rep.Daily {
		rep.Searches += d.Searches
		rep.Asks += d.Asks
	}
	var all, missed [2][]named
	for kind, m := range texts {
		for text, t := range m {
			all[kind] = append(all[kind], named{text, &t.all})
			if t.missed.n > 0 {
				missed[kind] = append(missed[kind], named{text, &t.missed})
			}
		}
	}
	rep.TopQueries, rep.ZeroResultQueries = ranked(all[0], q.Limit), ranked(missed[0], q.Limit)
	rep.TopQuestions, rep.UnansweredQuestions = ranked(all[1], q.Limit), ranked(missed[1], q.Limit)
	return rep
}

type named struct {
	text string
	*tally
}

// ranked sorts ts most frequent first, then most recent, then by text,
// and returns the first limit as entries.
func ranked(ts []named, limit int) []Entry {
	slices.SortFunc(ts, func(a, b named) int {
		return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(b.last, a.last), strings.Compare(a.text, b.text))
	})
	out := make([]Entry, 0, min(len(ts), limit))
	for _, t := range ts[:min(len(ts), limit)] {
		out = append(out, t.entry(t.text))
	}
	return out
}
