package crawl

import (
	"slices"
	"strings"
)

// ConfigField describes one config setting of a source type, for forms
// that edit it (the dashboard's console).
type ConfigField struct {
	Name     string
	Kind     string // string, secret, url, strings (one item per line), bool, int
	Required bool
	Default  any    // the value CheckConfig fills in when absent; nil = none
	Min, Max int    // int: the bounds; strings: Max is the most items
	Hint     string // what a string or each item must look like, if constrained
}

var kindNames = map[fieldKind]string{
	kString: "string", kSecret: "secret", kURL: "url", kStrings: "strings", kBool: "bool", kInt: "int",
}

// ConfigFields returns the settings of sources of typ, required ones
// first, then by name; nil for an unknown type.
func ConfigFields(typ string) []ConfigField {
	t, ok := types[typ]
	if !ok {
		return nil
	}
	out := make([]ConfigField, 0, len(t.fields))
	for name, f := range t.fields {
		out = append(out, ConfigField{
			Name: name, Kind: kindNames[f.kind], Required: f.required, Default: f.def,
			Min: f.min, Max: f.max, Hint: f.hint,
		})
	}
	slices.SortFunc(out, func(a, b ConfigField) int {
		if a.Required != b.Required {
			if a.Required {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}
