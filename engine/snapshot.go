package engine

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/internal/bin"
	"github.com/sift-search/sift/record"
)

// A snapshot is a 32-byte header followed by one zstd stream of frames:
//
//	header: "SIFTSNAP" | u32 version | u64 sequence | i64 created (unix ns) | u32 CRC-32C of the previous 28 bytes
//	frames: meta, sources…, settings, insights…, authors…, channels…, messages…,
//	        documents…, message index…, document index…,
//	        (section name, section data…)…, end
//
// A section is a follower's (the semantic layer's): the store writes and
// checks its frames, the follower their payloads. See docs/format.md for
// the payload of each frame.
const (
	snapMagic = "SIFTSNAP"
	// Versions 1 (before the semantic index), 2 (before visibility), 3
	// (the semantic index among the store's frames), 4 (before documents'
	// languages), 5 (index encoding 3) and 6 (before insights) are read
	// too; the semantic frames of 2 and 3 are skipped, and the follower
	// rebuilds.
	snapVersion    = 7
	snapHeaderSize = 32

	// analyzerVersion names the tokenizer's output. A snapshot written with
	// another one has its indexes rebuilt from the records at load.
	analyzerVersion = analysis.Version
)

const (
	frameMeta      = 1
	frameSources   = 2
	frameAuthors   = 3
	frameChannels  = 4
	frameMessages  = 5
	frameDocuments = 6
	frameMsgIndex  = 7
	frameDocIndex  = 8
	frameSettings  = 14
	frameSection   = 15 // a follower's section starts; payload: its name
	frameSectData  = 16 // a payload of the section
	frameInsights  = 17 // blocks of insight rows (version 7 on)
	frameEnd       = 0x7F

	// frameMore marks a frame whose payload continues in the next frame: a
	// record larger than chunkBytes (a big document, a long postings list)
	// spans several frames, each within the frame limit.
	frameMore  = 0x80
	chunkBytes = 16 << 20
)

// Records per block of each kind; a block is also cut at blockBytes.
const (
	authorsPerFrame  = 4096
	channelsPerFrame = 1024
	messagesPerFrame = 2048
	docsPerFrame     = 64
	blockBytes       = 4 << 20
)

// snapshotMeta is the first frame: what the rest must hold.
type snapshotMeta struct {
	analyzer    string
	titleWeight uint8
	sources     int
	authors     int
	chans       int
	msgs        int
	docs        int
	chunks      int // versions 2 and 3
	insights    int // version 7 on
}

// snapCodec is the state's role of being a snapshot: it writes the
// records and indexes as frames (writeTo) and reads them back into an
// empty state (readRecords, then readIndexes, or reindex when the
// snapshot's analysis is not this build's). Like messageTable it is the
// state itself, embedded in it.
type snapCodec struct{ *state }

// frameWriter writes payloads as frames, splitting those over chunkBytes
// into continued frames, and counts the frames.
type frameWriter struct {
	w   io.Writer
	buf []byte
	n   uint64
}

func (fw *frameWriter) frame(typ byte, payload []byte) error {
	if typ&frameMore != 0 {
		panic("BUG: snapshot frame type with the continuation bit")
	}
	for {
		chunk, t := payload, typ
		if len(chunk) > chunkBytes {
			chunk, t = chunk[:chunkBytes], typ|frameMore
		}
		fw.buf = appendFrame(fw.buf[:0], t, chunk)
		fw.n++
		if _, err := fw.w.Write(fw.buf); err != nil {
			return err
		}
		payload = payload[len(chunk):]
		if t == typ {
			return nil
		}
	}
}

// writeTo writes st as a snapshot at sequence number seq. The caller keeps
// writers out for its duration.
func (st *snapCodec) writeTo(w io.Writer, seq uint64, titleWeight uint8, f Follower) error {
	hdr := make([]byte, 0, snapHeaderSize)
	hdr = append(hdr, snapMagic...)
	hdr = binary.LittleEndian.AppendUint32(hdr, snapVersion)
	hdr = binary.LittleEndian.AppendUint64(hdr, seq)
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(time.Now().UnixNano()))
	hdr = binary.LittleEndian.AppendUint32(hdr, crc32.Checksum(hdr, castagnoli))
	if _, err := w.Write(hdr); err != nil {
		return fmt.Errorf("write snapshot header: %w", err)
	}
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(2))
	if err != nil {
		return fmt.Errorf("start compression: %w", err)
	}
	fw := &frameWriter{w: zw}
	if err := st.writeFrames(fw, seq, titleWeight, f); err != nil {
		zw.Close()
		return fmt.Errorf("write snapshot: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("finish compression: %w", err)
	}
	return nil
}

func (st *snapCodec) writeFrames(fw *frameWriter, seq uint64, titleWeight uint8, f Follower) error {
	var e bin.Enc
	e.String(analyzerVersion)
	e.U8(titleWeight)
	for _, n := range []int{len(st.sources), len(st.authors), len(st.chans), st.msgs.len(), len(st.docs), len(st.insights)} {
		e.Uvarint(uint64(n))
	}
	if err := fw.frame(frameMeta, e.B); err != nil {
		return err
	}
	for _, id := range sortedKeys(st.sources) {
		e.B = e.B[:0]
		if err := encodeSourceRecord(&e, st.sources[id], true); err != nil {
			return err
		}
		if err := fw.frame(frameSources, e.B); err != nil {
			return err
		}
	}
	e.B = e.B[:0]
	encodeStringMap(&e, st.settings)
	if err := fw.frame(frameSettings, e.B); err != nil {
		return err
	}
	rows := st.insightRows()
	err := writeBlocks(fw, &e, frameInsights, len(rows), insightsPerFrame, func(i int) { encodeInsight(&e, &rows[i]) })
	if err != nil {
		return err
	}
	err = writeBlocks(fw, &e, frameAuthors, len(st.authors), authorsPerFrame, func(i int) {
		e.String(st.authors[i].name)
		e.String(st.authors[i].display)
	})
	if err != nil {
		return err
	}
	err = writeBlocks(fw, &e, frameChannels, len(st.chans), channelsPerFrame, func(i int) {
		e.Bool(st.chans[i] != nil)
		if st.chans[i] != nil {
			encodeChannel(&e, st.chans[i])
		}
	})
	if err != nil {
		return err
	}
	err = writeBlocks(fw, &e, frameMessages, st.msgs.len(), messagesPerFrame, func(i int) {
		r := st.msgs.at(uint32(i))
		e.String(st.text.msgID(r.text))
		if !r.live() {
			return
		}
		m := st.message(uint32(i))
		e.Uvarint(uint64(r.channel))
		e.Uvarint(uint64(r.author))
		e.String(st.text.msgContent(r.text))
		e.String(m.ReplyTo)
		e.String(m.URL)
		e.Varint(r.ts)
		e.Varint(timeMicro(m.EditedAt))
	})
	if err != nil {
		return err
	}
	err = writeBlocks(fw, &e, frameDocuments, len(st.docs), docsPerFrame, func(i int) {
		e.Bool(st.docs[i] != nil)
		if st.docs[i] != nil {
			encodeDocument(&e, st.docs[i])
		}
	})
	if err != nil {
		return err
	}
	if err := st.msgIdx.Encode(func(b []byte) error { return fw.frame(frameMsgIndex, b) }); err != nil {
		return err
	}
	if err := st.docIdx.Encode(func(b []byte) error { return fw.frame(frameDocIndex, b) }); err != nil {
		return err
	}
	if f != nil {
		if err := fw.frame(frameSection, []byte(f.Section())); err != nil {
			return err
		}
		err := f.WriteSection(seq, func(b []byte) error { return fw.frame(frameSectData, b) })
		if err != nil {
			return fmt.Errorf("section %s: %w", f.Section(), err)
		}
	}
	e.B = e.B[:0]
	e.Uvarint(fw.n + 1)
	return fw.frame(frameEnd, e.B)
}

// writeBlocks writes n records in blocks of at most per records and about
// blockBytes; each block's payload is the record count then what put(i)
// appends to e.
func writeBlocks(fw *frameWriter, e *bin.Enc, typ byte, n, per int, put func(i int)) error {
	var block bin.Enc
	for start := 0; start < n; {
		e.B = e.B[:0]
		end := start
		for ; end < n && end-start < per && len(e.B) < blockBytes; end++ {
			put(end)
		}
		block.B = block.B[:0]
		block.Uvarint(uint64(end - start))
		block.B = append(block.B, e.B...)
		if err := fw.frame(typ, block.B); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// frameReader reads frames with one frame of look-ahead.
type frameReader struct {
	r       io.Reader
	typ     byte
	payload []byte
	err     error
	n       uint64
}

func (fr *frameReader) advance() {
	if fr.err != nil {
		return
	}
	var payload []byte
	for {
		typ, p, err := readFrame(fr.r)
		if err == nil {
			fr.n++
		}
		if err == io.EOF {
			err = fmt.Errorf("%w: snapshot ends without its end frame", errTorn)
		}
		if err != nil {
			fr.err = err
			return
		}
		if payload == nil {
			payload = p
		} else {
			payload = append(payload, p...)
		}
		if typ&frameMore == 0 {
			fr.typ, fr.payload = typ, payload
			return
		}
	}
}

// take returns the current frame's payload if it has type typ, and advances.
func (fr *frameReader) take(typ byte) ([]byte, error) {
	if fr.err != nil {
		return nil, fr.err
	}
	if fr.typ != typ {
		return nil, fmt.Errorf("frame %d: type %d where %d was expected", fr.n, fr.typ, typ)
	}
	p := fr.payload
	fr.advance()
	return p, nil
}

// readBlocks reads n records from frames of type typ, calling get for each.
func (fr *frameReader) readBlocks(typ byte, n int, get func(d *bin.Dec) error) error {
	for done := 0; done < n; {
		p, err := fr.take(typ)
		if err != nil {
			return err
		}
		d := &bin.Dec{B: p}
		c := d.Count(1)
		if c == 0 || c > n-done {
			return fmt.Errorf("frame type %d: bad record count %d", typ, c)
		}
		for ; c > 0; c-- {
			if err := get(d); err != nil {
				return err
			}
			if d.Err != nil {
				return d.Err
			}
			done++
		}
		if err := d.Done(); err != nil {
			return err
		}
	}
	return nil
}

// snapHeader is what a snapshot's header says.
type snapHeader struct {
	version uint32
	seq     uint64
	created time.Time
}

// snapshotHeader reads and checks the header.
func snapshotHeader(r io.Reader) (snapHeader, error) {
	var hdr [snapHeaderSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return snapHeader{}, fmt.Errorf("read header: %w", err)
	}
	if string(hdr[:8]) != snapMagic {
		return snapHeader{}, errors.New("not a Sift snapshot (bad magic)")
	}
	if crc32.Checksum(hdr[:28], castagnoli) != binary.LittleEndian.Uint32(hdr[28:]) {
		return snapHeader{}, errors.New("header checksum mismatch")
	}
	h := snapHeader{
		version: binary.LittleEndian.Uint32(hdr[8:]),
		seq:     binary.LittleEndian.Uint64(hdr[12:]),
		created: time.Unix(0, int64(binary.LittleEndian.Uint64(hdr[20:]))),
	}
	if h.version < 1 || h.version > snapVersion {
		return snapHeader{}, fmt.Errorf("unsupported snapshot version %d (this build reads 1 to %d)", h.version, snapVersion)
	}
	return h, nil
}

// checkFrames reads a snapshot's frames to the end without decoding them:
// every checksum, the end frame's count and the end of the stream. It is
// how a snapshot just written is checked before older ones are deleted.
func checkFrames(r io.Reader) error {
	if _, err := snapshotHeader(r); err != nil {
		return err
	}
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20))
	if err != nil {
		return err
	}
	defer zr.Close()
	fr := &frameReader{r: bufio.NewReaderSize(zr, 1<<20)}
	for fr.advance(); fr.err == nil && fr.typ != frameEnd; fr.advance() {
	}
	p, err := fr.take(frameEnd)
	if err != nil {
		return err
	}
	d := &bin.Dec{B: p}
	if n := d.Uvarint(); d.Done() != nil || n != fr.n {
		return fmt.Errorf("end frame counts %d frames, read %d", n, fr.n)
	}
	if n, err := io.Copy(io.Discard, fr.r); err != nil || n != 0 {
		return fmt.Errorf("after the end frame: %d bytes, %v", n, err)
	}
	return nil
}

// readState reads a snapshot written by writeTo and validates all of it.
// rebuilt reports that the indexes were rebuilt from the records because the
// snapshot was written by another tokenizer version.
func readState(r io.Reader, opts Options) (st *state, seq uint64, rebuilt bool, err error) {
	hdr, err := snapshotHeader(r)
	if err != nil {
		return nil, 0, false, err
	}
	seq = hdr.seq
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(2), zstd.WithDecoderMaxWindow(64<<20))
	if err != nil {
		return nil, 0, false, fmt.Errorf("start decompression: %w", err)
	}
	defer zr.Close()
	fr := &frameReader{r: bufio.NewReaderSize(zr, 1<<20)}
	if st, rebuilt, err = readBody(fr, hdr, opts); err != nil {
		return nil, 0, false, err
	}
	// Read the compressed stream to its end, so its own checksum is
	// verified and nothing trails the end frame.
	if n, err := io.Copy(io.Discard, fr.r); err != nil || n != 0 {
		return nil, 0, false, fmt.Errorf("after the end frame: %d bytes, %v", n, err)
	}
	return st, seq, rebuilt, nil
}

// readBody reads a snapshot's frames, from the first to the end frame.
func readBody(fr *frameReader, hdr snapHeader, opts Options) (st *state, rebuilt bool, err error) {
	version := hdr.version
	fr.advance()
	st = newState(opts.Index)
	meta, err := st.readRecords(fr, version)
	if err != nil {
		return nil, false, err
	}
	if meta.analyzer == analyzerVersion && meta.titleWeight == opts.TitleWeight {
		if err := st.readIndexes(fr, opts.Index); err != nil {
			return nil, false, err
		}
	} else {
		for fr.err == nil && (fr.typ == frameMsgIndex || fr.typ == frameDocIndex) {
			fr.advance()
		}
		st.reindex(opts.Index, opts.TitleWeight)
		rebuilt = true
	}
	st.refreshVisibility("")
	var commit func()
	if version == 2 || version == 3 {
		skipLegacySemantic(fr)
	} else if version >= 4 {
		if commit, err = readSections(fr, hdr.seq, st, opts.Follower); err != nil {
			return nil, false, err
		}
	}
	p, err := fr.take(frameEnd)
	if err != nil {
		return nil, false, err
	}
	d := &bin.Dec{B: p}
	if n := d.Uvarint(); d.Done() != nil || n != fr.n {
		return nil, false, fmt.Errorf("end frame counts %d frames, read %d", n, fr.n)
	}
	st.commit = commit // once the caller has checked the rest
	return st, rebuilt, nil
}

// readSections reads the followers' sections: f reads its own; a section
// no follower reads (one written with the semantic layer on, read with it
// off) is skipped, its frames checked as every frame is.
func readSections(fr *frameReader, seq uint64, st *state, f Follower) (commit func(), err error) {
	for fr.err == nil && fr.typ == frameSection {
		name, err := fr.take(frameSection)
		if err != nil {
			return nil, err
		}
		if f == nil || string(name) != f.Section() {
			for fr.err == nil && fr.typ == frameSectData {
				fr.advance()
			}
			continue
		}
		if commit != nil {
			return nil, fmt.Errorf("section %s twice", name)
		}
		c, err := f.ReadSection(seq, &View{st}, func() ([]byte, error) { return fr.take(frameSectData) })
		if err != nil {
			return nil, fmt.Errorf("section %s: %w", name, err)
		}
		if fr.err == nil && fr.typ == frameSectData {
			return nil, fmt.Errorf("section %s: data left unread", name)
		}
		commit = c
	}
	return commit, fr.err
}

// Frames of the semantic index of versions 2 and 3, which a follower now
// keeps in its own section.
const (
	frameChunks   = 9
	frameChunkIdx = 10
	frameSemantic = 11
	frameModel    = 12
	frameVectors  = 13
)

// skipLegacySemantic skips the semantic frames of a version 2 or 3
// snapshot (after the document index; the chunk records were skipped with
// the records).
func skipLegacySemantic(fr *frameReader) {
	for fr.err == nil && (fr.typ == frameChunkIdx || fr.typ == frameSemantic || fr.typ == frameModel || fr.typ == frameVectors) {
		fr.advance()
	}
}

func (st *snapCodec) readRecords(fr *frameReader, version uint32) (snapshotMeta, error) {
	var m snapshotMeta
	p, err := fr.take(frameMeta)
	if err != nil {
		return m, err
	}
	d := &bin.Dec{B: p}
	m.analyzer = d.String()
	m.titleWeight = d.U8()
	counts := []*int{&m.sources, &m.authors, &m.chans, &m.msgs, &m.docs}
	switch {
	case version == 2 || version == 3:
		counts = append(counts, &m.chunks)
	case version >= 7:
		counts = append(counts, &m.insights)
	}
	for _, n := range counts {
		if *n = int(d.Uvarint()); *n < 0 {
			return m, errors.New("meta: count out of range")
		}
	}
	if err := d.Done(); err != nil {
		return m, fmt.Errorf("meta: %w", err)
	}
	for i := 0; i < m.sources; i++ {
		p, err := fr.take(frameSources)
		if err != nil {
			return m, err
		}
		d := &bin.Dec{B: p}
		s := decodeSource(d, version >= 3) // a snapshot's source holds its cursor
		if err := d.Done(); err != nil {
			return m, fmt.Errorf("source: %w", err)
		}
		st.sources[s.ID] = &s
		st.setRules(&s)
	}
	if version >= 3 {
		p, err := fr.take(frameSettings)
		if err != nil {
			return m, err
		}
		d := &bin.Dec{B: p}
		st.settings = decodeStringMap(d)
		if err := d.Done(); err != nil {
			return m, fmt.Errorf("settings: %w", err)
		}
	}
	err = fr.readBlocks(frameInsights, m.insights, func(d *bin.Dec) error {
		in := decodeInsight(d)
		if d.Err == nil && in.Count == 0 {
			return errors.New("a row of count 0")
		}
		st.insights[keyOf(&in)] = insightCounts{in.Count, in.NoResults, in.Unanswered}
		return nil
	})
	if err != nil {
		return m, fmt.Errorf("insights: %w", err)
	}
	if len(st.insights) != m.insights {
		return m, errors.New("insights: duplicates")
	}
	err = fr.readBlocks(frameAuthors, m.authors, func(d *bin.Dec) error {
		st.authorFor(d.String(), d.String())
		return nil
	})
	if err != nil {
		return m, fmt.Errorf("authors: %w", err)
	}
	if len(st.authors) != m.authors {
		return m, errors.New("authors: duplicates")
	}
	err = fr.readBlocks(frameChannels, m.chans, func(d *bin.Dec) error {
		if !d.Bool() {
			st.chans = append(st.chans, nil)
			return nil
		}
		c := decodeChannel(d, version >= 3)
		if _, ok := st.sources[c.SourceID]; !ok && d.Err == nil {
			return fmt.Errorf("channel %q of unknown source %q", c.ID, c.SourceID)
		}
		st.chanKey[recKey{c.SourceID, c.ID}] = uint32(len(st.chans))
		st.chanSlug[c.Slug] = uint32(len(st.chans))
		st.chans = append(st.chans, &c)
		return nil
	})
	if err != nil {
		return m, fmt.Errorf("channels: %w", err)
	}
	st.msgs = recs{}
	err = fr.readBlocks(frameMessages, m.msgs, func(d *bin.Dec) error {
		slot := uint32(st.msgs.len())
		id := d.String()
		if id == "" {
			st.msgs.append(msgRec{})
			return nil
		}
		ch, au := d.Uvarint(), d.Uvarint()
		msg := record.Message{ID: id, Content: d.String(), ReplyTo: d.String(), URL: d.String()}
		msg.Timestamp, msg.EditedAt = microTime(d.Varint()), microTime(d.Varint())
		if d.Err != nil {
			return nil
		}
		if ch >= uint64(len(st.chans)) || st.chans[ch] == nil || au >= uint64(len(st.authors)) {
			return fmt.Errorf("message %q: bad channel or author", id)
		}
		msg.SourceID = st.chans[ch].SourceID
		msg.Author, msg.AuthorName = st.authors[au].name, st.authors[au].display
		if i := st.storeMessage(&msg, uint32(ch)); i != slot {
			return fmt.Errorf("BUG: message slot %d stored at %d", slot, i)
		}
		return nil
	})
	if err != nil {
		return m, fmt.Errorf("messages: %w", err)
	}
	st.buildChannelOrders()
	err = fr.readBlocks(frameDocuments, m.docs, func(d *bin.Dec) error {
		if !d.Bool() {
			st.docs = append(st.docs, nil)
			return nil
		}
		doc := decodeDocument(d, version >= 5)
		st.docID[doc.ID] = uint32(len(st.docs))
		st.docSlug[doc.Slug] = uint32(len(st.docs))
		st.docs = append(st.docs, &doc)
		return nil
	})
	if err != nil {
		return m, fmt.Errorf("documents: %w", err)
	}
	for fr.err == nil && fr.typ == frameChunks { // versions 2 and 3
		fr.advance()
	}
	return m, nil
}

// readIndexes decodes both indexes and checks they agree with the records.
func (st *snapCodec) readIndexes(fr *frameReader, opts index.Options) error {
	var err error
	if st.msgIdx, err = index.Decode(opts, func() ([]byte, error) { return fr.take(frameMsgIndex) }); err != nil {
		return fmt.Errorf("message index: %w", err)
	}
	if st.docIdx, err = index.Decode(opts, func() ([]byte, error) { return fr.take(frameDocIndex) }); err != nil {
		return fmt.Errorf("document index: %w", err)
	}
	if int(st.msgIdx.NextID()) > st.msgs.len() || int(st.docIdx.NextID()) > len(st.docs) {
		return errors.New("index refers to records the snapshot lacks")
	}
	for i := range st.msgs.len() {
		if st.msgs.at(uint32(i)).live() != st.msgIdx.Contains(uint32(i)) {
			return fmt.Errorf("message slot %d: index and records disagree", i)
		}
	}
	for i := range st.docs {
		if (st.docs[i] != nil) != st.docIdx.Contains(uint32(i)) {
			return fmt.Errorf("document slot %d: index and records disagree", i)
		}
	}
	return nil
}

// reindex rebuilds both indexes from the records.
func (st *snapCodec) reindex(opts index.Options, titleWeight uint8) {
	st.msgIdx, st.docIdx = index.New(opts), index.New(opts)
	a := newWriter()
	d := &a.docs[0]
	for i := range st.msgs.len() {
		r := st.msgs.at(uint32(i))
		if !r.live() {
			continue
		}
		m := st.message(uint32(i))
		lang := a.Message(d, m.Content)
		a.fac = withLang(messageFacets(a.fac[:0], &m, r.channel), lang)
		st.msgIdx.Add(uint32(i), d, a.fac)
	}
	for i, doc := range st.docs {
		if doc == nil {
			continue
		}
		lang := a.DocumentIn(d, doc, titleWeight)
		st.docIdx.Add(uint32(i), d, withLang([]string{sourceFacet(doc.SourceID)}, lang))
	}
}
