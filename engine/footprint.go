package engine

import (
	"unsafe"

	"github.com/sift-search/sift/index"
)

// Footprint is the memory the engine's records and indexes hold, by
// structure, in bytes (see index.Footprint): what a heap profile shows by
// allocation site, named by what it is.
type Footprint struct {
	Text     int64 // the message ids and contents (slab)
	Records  int64 // message records, their extra fields and keys
	Order    int64 // each channel's messages in time order
	Messages index.Footprint
	Docs     index.Footprint
}

// Total is the sum of the parts.
func (f Footprint) Total() int64 {
	return f.Text + f.Records + f.Order + f.Messages.Total() + f.Docs.Total()
}

// Footprint measures the engine. O(terms + channels).
func (e *instance) Footprint() Footprint {
	e.mu.RLock()
	defer e.mu.RUnlock()
	st := e.st
	var f Footprint
	for _, c := range st.text.chunks {
		f.Text += int64(cap(c))
	}
	f.Records = st.msgs.bytes() +
		int64(len(st.msgExtra))*int64(unsafe.Sizeof(msgExtra{})+4+16) +
		int64(cap(st.msgKey.slots)+cap(st.msgKey.hashes))*4
	for _, o := range st.chanOrder {
		f.Order += int64(cap(o))*4 + 40
	}
	f.Messages, f.Docs = st.msgIdx.Footprint(), st.docIdx.Footprint()
	return f
}
