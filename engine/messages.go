package engine

import (
	"hash/maphash"
	"unsafe"

	"github.com/sift-search/sift/record"
)

// messageTable is the state's role of holding the messages: their records
// by slot (msgs, msgExtra), the table that finds them by key (msgKey),
// their text (text), their authors (authors, authorNo) and, for each
// channel, its messages in time order (chanOrder, order.go). It is the
// state itself, embedded in it, so its methods are the state's: the split
// is of methods by role, not of the data, which every role reads.
type messageTable struct{ *state }

// msgRec is a stored message: the fields of Message every message has, its
// channel and author as numbers into their tables. A deleted slot has an
// empty id. The fields few messages have live in msgExtra, and a message
// URL that is its channel's URL plus "/" plus its id is not stored at all
// (Discord's links are all of that form).
type msgRec struct {
	text    ref   // id and content in st.text (slab.addMessage); 0 once deleted
	ts      int64 // unix microseconds
	channel uint32
	author  uint32
}

// recs holds the message records by slot, in pages of recPage: growing
// never copies the records already held (ten million of them would be a
// quarter of a gigabyte moved under the write lock), and nothing is
// allocated beyond the last page.
type recs struct {
	pages [][]msgRec
	n     int
}

const recPageBits = 16

func (r *recs) at(i uint32) *msgRec { return &r.pages[i>>recPageBits][i&(1<<recPageBits-1)] }

// len is the number of slots.
func (r *recs) len() int { return r.n }

// append adds x as a new slot and returns the slot. The first page grows
// as a slice does, so a small engine holds a small one.
func (r *recs) append(x msgRec) uint32 {
	p := r.n >> recPageBits
	if p == len(r.pages) {
		c := 1 << recPageBits
		if p == 0 {
			c = 64
		}
		r.pages = append(r.pages, make([]msgRec, 0, c))
	}
	r.pages[p] = append(r.pages[p], x)
	r.n++
	return uint32(r.n - 1)
}

// bytes is the memory the pages hold.
func (r *recs) bytes() int64 {
	n := 0
	for _, p := range r.pages {
		n += cap(p)
	}
	return int64(n) * int64(unsafe.Sizeof(msgRec{}))
}

// live reports whether the slot holds a message.
func (r *msgRec) live() bool { return r.text != 0 }

// msgID returns the id of the message in slot i ("" once deleted).
func (st *messageTable) msgID(i uint32) string { return st.text.msgID(st.msgs.at(i).text) }

// msgExtra holds the rarely set fields of a message.
type msgExtra struct {
	replyTo string
	url     string // when ownURL; else the URL derives from the channel's
	ownURL  bool
	edited  int64
}

// Messages are found by source and id through a table keyed by a 64-bit
// hash of the two (keyTable), the slot it names checked against the key.
var keySeed = maphash.MakeSeed()

func keyHash(source, id string) uint64 {
	var h maphash.Hash
	h.SetSeed(keySeed)
	h.WriteString(source)
	h.WriteByte(0)
	h.WriteString(id)
	return h.Sum64()
}

// msgIs reports whether slot i holds message id of source.
func (st *messageTable) msgIs(i uint32, source, id string) bool {
	r := st.msgs.at(i)
	return r.live() && st.text.msgID(r.text) == id && st.chans[r.channel].SourceID == source
}

// findMessage returns the slot of a message.
func (st *messageTable) findMessage(source, id string) (uint32, bool) {
	return st.msgKey.find(keyHash(source, id), func(i uint32) bool { return st.msgIs(i, source, id) })
}

// setMessageKey files slot under its key, replacing the slot filed before.
func (st *messageTable) setMessageKey(source, id string, slot uint32) {
	h := keyHash(source, id)
	if old, ok := st.findMessage(source, id); ok {
		st.msgKey.remove(h, old)
	}
	st.msgKey.insert(h, slot)
}

func (st *messageTable) deleteMessageKey(source, id string, slot uint32) {
	st.msgKey.remove(keyHash(source, id), slot)
}

// message rebuilds the public form of the message in slot i.
func (st *messageTable) message(i uint32) record.Message {
	r := st.msgs.at(i)
	ch := st.chans[r.channel]
	a := st.authors[r.author]
	m := record.Message{
		SourceID: ch.SourceID, ChannelID: ch.ID, ID: st.text.msgID(r.text), Author: a.name, AuthorName: a.display,
		Content: st.text.msgContent(r.text), Timestamp: microTime(r.ts),
	}
	x := st.msgExtra[i]
	m.ReplyTo, m.EditedAt, m.URL = x.replyTo, microTime(x.edited), x.url
	if !x.ownURL {
		m.URL = record.DerivedURL(ch, m.ID)
	}
	return m
}

// sameMessage reports whether storing m in slot i would change nothing.
func (st *messageTable) sameMessage(i uint32, m *record.Message) bool {
	old := st.message(i)
	return record.SameMessage(&old, m)
}

// pinMessageURLs stores the URLs the messages of channel n derive from the
// channel's URL, before that URL changes: a message keeps the URL it was
// given. The caller holds the write locks.
func (st *messageTable) pinMessageURLs(n uint32) {
	ch := st.chans[n]
	st.msgIdx.Facet(channelFacet(n)).Iterate(func(slot uint32) bool {
		if x := st.msgExtra[slot]; !x.ownURL {
			x.url, x.ownURL = record.DerivedURL(ch, st.msgID(slot)), true
			st.msgExtra[slot] = x
		}
		return true
	})
}

// storeMessage appends m, of channel number ch, as a new slot and returns
// it. The caller holds the write locks and indexes the slot.
func (st *messageTable) storeMessage(m *record.Message, ch uint32) uint32 {
	slot := st.msgs.append(msgRec{
		text: st.text.addMessage(m.ID, m.Content), ts: timeMicro(m.Timestamp),
		channel: ch, author: st.authorFor(m.Author, m.AuthorName),
	})
	x := msgExtra{replyTo: m.ReplyTo, edited: timeMicro(m.EditedAt)}
	if m.URL != record.DerivedURL(st.chans[ch], m.ID) {
		x.url, x.ownURL = m.URL, true
	}
	if x != (msgExtra{}) {
		st.msgExtra[slot] = x
	}
	st.setMessageKey(m.SourceID, m.ID, slot)
	return slot
}

// deleteMessage frees slot i. The caller holds the write locks.
func (st *messageTable) deleteMessage(i uint32) {
	r := st.msgs.at(i)
	if !r.live() {
		return
	}
	st.deleteMessageKey(st.chans[r.channel].SourceID, st.text.msgID(r.text), i)
	st.orderRemove(r.channel, i)
	delete(st.msgExtra, i)
	st.msgIdx.Delete(i)
	*r = msgRec{}
}

// authorFor returns the number of an author, adding it to the table when
// it is new. The caller holds the write locks.
func (st *messageTable) authorFor(name, display string) uint32 {
	a := author{name, display}
	if n, ok := st.authorNo[a]; ok {
		return n
	}
	n := uint32(len(st.authors))
	st.authors = append(st.authors, a)
	st.authorNo[a] = n
	return n
}

// messageSlots returns the slots of the given messages of a source.
func (st *messageTable) messageSlots(source string, ids []string) []uint32 {
	var slots []uint32
	for _, id := range ids {
		if i, ok := st.findMessage(source, id); ok {
			slots = append(slots, i)
		}
	}
	return slots
}
