package engine

import (
	"hash/maphash"
)

// msgRec is a stored message: the fields of Message every message has, its
// channel and author as numbers into their tables. A deleted slot has an
// empty id. The fields few messages have live in msgExtra, and a message
// URL that is its channel's URL plus "/" plus its id is not stored at all
// (Discord's links are all of that form).
type msgRec struct {
	id      string
	content string
	ts      int64 // unix microseconds
	channel uint32
	author  uint32
}

// msgExtra holds the rarely set fields of a message.
type msgExtra struct {
	replyTo string
	url     string // when ownURL; else the URL derives from the channel's
	ownURL  bool
	edited  int64
}

// derivedURL is the URL a message of channel c gets when it stores none.
func derivedURL(c *Channel, id string) string {
	if c.URL == "" {
		return ""
	}
	return c.URL + "/" + id
}

// Messages are found by source and id through a map keyed by a 64-bit hash
// of the two, a third of the size of a map keyed by the strings; a key
// whose hash is already taken by another goes to msgKeyX.
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
func (st *state) msgIs(i uint32, source, id string) bool {
	r := &st.msgs[i]
	return r.id == id && r.id != "" && st.chans[r.channel].SourceID == source
}

// findMessage returns the slot of a message.
func (st *state) findMessage(source, id string) (uint32, bool) {
	if i, ok := st.msgKey[keyHash(source, id)]; ok && st.msgIs(i, source, id) {
		return i, true
	}
	i, ok := st.msgKeyX[recKey{source, id}]
	return i, ok
}

func (st *state) setMessageKey(source, id string, slot uint32) {
	h := keyHash(source, id)
	if old, ok := st.msgKey[h]; ok && !st.msgIs(old, source, id) {
		st.msgKeyX[recKey{source, id}] = slot
		return
	}
	st.msgKey[h] = slot
}

func (st *state) deleteMessageKey(source, id string, slot uint32) {
	h := keyHash(source, id)
	if i, ok := st.msgKey[h]; ok && i == slot {
		delete(st.msgKey, h)
		return
	}
	delete(st.msgKeyX, recKey{source, id})
}

// message rebuilds the public form of the message in slot i.
func (st *state) message(i uint32) Message {
	r := &st.msgs[i]
	ch := st.chans[r.channel]
	a := st.authors[r.author]
	m := Message{
		SourceID: ch.SourceID, ChannelID: ch.ID, ID: r.id, Author: a.name, AuthorName: a.display,
		Content: r.content, Timestamp: microTime(r.ts),
	}
	x := st.msgExtra[i]
	m.ReplyTo, m.EditedAt, m.URL = x.replyTo, microTime(x.edited), x.url
	if !x.ownURL {
		m.URL = derivedURL(ch, r.id)
	}
	return m
}

// sameMessage reports whether storing m in slot i would change nothing.
func (st *state) sameMessage(i uint32, m *Message) bool {
	old := st.message(i)
	return SameMessage(&old, m)
}

// pinMessageURLs stores the URLs the messages of channel n derive from the
// channel's URL, before that URL changes: a message keeps the URL it was
// given. The caller holds the write locks.
func (st *state) pinMessageURLs(n uint32) {
	ch := st.chans[n]
	st.msgIdx.Facet(channelFacet(n)).Iterate(func(slot uint32) bool {
		if x := st.msgExtra[slot]; !x.ownURL {
			x.url, x.ownURL = derivedURL(ch, st.msgs[slot].id), true
			st.msgExtra[slot] = x
		}
		return true
	})
}

// storeMessage appends m, of channel number ch, as a new slot and returns
// it. The caller holds the write locks and indexes the slot.
func (st *state) storeMessage(m *Message, ch uint32) uint32 {
	slot := uint32(len(st.msgs))
	st.msgs = append(st.msgs, msgRec{
		id: m.ID, content: m.Content, ts: timeMicro(m.Timestamp),
		channel: ch, author: st.authorFor(m.Author, m.AuthorName),
	})
	x := msgExtra{replyTo: m.ReplyTo, edited: timeMicro(m.EditedAt)}
	if m.URL != derivedURL(st.chans[ch], m.ID) {
		x.url, x.ownURL = m.URL, true
	}
	if x != (msgExtra{}) {
		st.msgExtra[slot] = x
	}
	st.setMessageKey(m.SourceID, m.ID, slot)
	return slot
}

// deleteMessage frees slot i. The caller holds the write locks.
func (st *state) deleteMessage(i uint32) {
	r := &st.msgs[i]
	if r.id == "" {
		return
	}
	st.deleteMessageKey(st.chans[r.channel].SourceID, r.id, i)
	st.orderRemove(r.channel, i)
	delete(st.msgExtra, i)
	st.msgIdx.Delete(i)
	*r = msgRec{}
}
