package engine

import "github.com/sift-search/sift/record"

// slugsIn reports the slugs taken in any of the maps.
func slugsIn[V any](maps ...map[string]V) func(string) bool {
	return func(s string) bool {
		for _, m := range maps {
			if _, ok := m[s]; ok {
				return true
			}
		}
		return false
	}
}

// newChannelSlugKey is the hiddenKey of record.SlugFor for new channel c, written
// with the channels of batch (its parent may be among them): its key when
// it is hidden, else "". The caller holds a lock of the state.
func (st *state) newChannelSlugKey(c *record.Channel, batch []record.Channel) string {
	parent := func(id string) *record.Channel {
		for i := range batch {
			if batch[i].SourceID == c.SourceID && batch[i].ID == id {
				return &batch[i]
			}
		}
		if n, ok := st.chanKey[recKey{c.SourceID, id}]; ok {
			return st.chans[n]
		}
		return nil
	}
	if record.ChannelHiddenBy(st.sources[c.SourceID], c, parent) {
		return record.ChannelSlugKey(c.SourceID, c.ID)
	}
	return ""
}

// newDocumentSlugKey is the hiddenKey of record.SlugFor for new document d: its
// id when its source is hidden, else "".
func (st *state) newDocumentSlugKey(d *record.Document) string {
	if record.SourceHidden(st.sources[d.SourceID]) {
		return d.ID
	}
	return ""
}
