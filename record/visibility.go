package record

import "github.com/sift-search/sift/tokenizer"

// Visibility decides what callers without credentials see. A source is
// public or private; a channel inherits from its source unless an operator
// set it public or private; a thread follows its parent; a channel the
// platform marks private (Channel.Private) is private unless an operator
// set it public; a disabled source is private whatever else is set.
// Documents follow their source.
//
// Reads that serve such callers leave hidden content out (SearchRequest,
// SemanticRequest and ListRequest carry the choice; Channel.Hidden and
// Document.Hidden tell the rest). Every store applies the same rule
// (ChannelHiddenBy, SourceHidden); how it keeps the hidden sets is its own.
const (
	VisibilityPublic  = "public"
	VisibilityPrivate = "private"
	VisibilityInherit = "inherit" // a channel's default: its source's (or its parent's)
)

// Bounds of an operator's lists on one source.
const (
	MaxOptOuts          = 10000
	MaxExcludedChannels = 10000
)

// AnonymousThread names a thread whose name quoted an opted-out author.
const AnonymousThread = "Thread"

// SourceHidden reports whether a source's own content (its documents, and
// channels that inherit) is hidden.
func SourceHidden(s *Source) bool {
	return s == nil || !s.Enabled || s.Visibility == VisibilityPrivate
}

// ChannelHiddenBy computes whether channel c of source src is hidden,
// finding the channels it is a thread of with parent (nil when unknown).
func ChannelHiddenBy(src *Source, c *Channel, parent func(id string) *Channel) bool {
	if src == nil || !src.Enabled {
		return true
	}
	// The nearest operator's choice decides, from the channel up through
	// the channels it is a thread of; a private conversation on the way
	// (a private thread, or the DM a thread is in) makes it private.
	for depth := 0; ; depth++ {
		switch src.ChannelVisibility[c.ID] {
		case VisibilityPublic:
			return false
		case VisibilityPrivate:
			return true
		}
		if c.Private {
			return true
		}
		if c.ParentID == "" || depth == 3 {
			break
		}
		p := parent(c.ParentID)
		if p == nil {
			break
		}
		c = p
	}
	return src.Visibility == VisibilityPrivate
}

// checkRules validates a source's visibility and operator lists and gives
// the source its own copies of them.
func checkRules(s *Source) error {
	switch s.Visibility {
	case "":
		s.Visibility = VisibilityPublic
	case VisibilityPublic, VisibilityPrivate:
	default:
		return invalidf("visibility must be %q or %q", VisibilityPublic, VisibilityPrivate)
	}
	cv := make(map[string]string, len(s.ChannelVisibility))
	for id, v := range s.ChannelVisibility {
		if err := CheckText("channel id", id, MaxIDBytes, true, true); err != nil {
			return err
		}
		switch v {
		case VisibilityPublic, VisibilityPrivate:
			cv[id] = v
		case "", VisibilityInherit:
		default:
			return invalidf("channel visibility must be %q, %q or %q", VisibilityPublic, VisibilityPrivate, VisibilityInherit)
		}
	}
	if len(cv) > MaxExcludedChannels {
		return invalidf("at most %d channels may have a visibility of their own", MaxExcludedChannels)
	}
	s.ChannelVisibility = cv
	var err error
	if s.ExcludedChannels, err = checkList("excluded channel", s.ExcludedChannels, MaxExcludedChannels, MaxIDBytes, nil); err != nil {
		return err
	}
	s.OptOuts, err = checkList("opted-out author", s.OptOuts, MaxOptOuts, MaxNameBytes, tokenizer.Fold)
	return err
}

// checkList validates a list of names, drops duplicates (as key says
// names compare) and returns a copy.
func checkList(what string, list []string, maxLen, maxBytes int, key func(string) string) ([]string, error) {
	if len(list) > maxLen {
		return nil, invalidf("at most %d of %ss", maxLen, what)
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(list))
	for _, v := range list {
		if err := CheckText(what, v, maxBytes, true, true); err != nil {
			return nil, err
		}
		k := v
		if key != nil {
			k = key(v)
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, v)
		}
	}
	return out, nil
}

// Hidden reports whether the source's own content — its documents, and
// channels that inherit — is kept from callers without credentials.
func (s *Source) Hidden() bool { return SourceHidden(s) }
