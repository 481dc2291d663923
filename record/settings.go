package record

import (
	"maps"
	"strings"
)

// Bounds of the instance's settings.
const (
	MaxSettings          = 64
	maxSettingKeyBytes   = 64
	MaxSettingValueBytes = 4096
)

// CheckSettings validates changes to the settings.
func CheckSettings(changes map[string]string) error {
	for k, v := range changes {
		if k == "" || len(k) > maxSettingKeyBytes || strings.ContainsFunc(k, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '_') }) {
			return invalidf("setting names are 1 to %d characters of a-z and '_'", maxSettingKeyBytes)
		}
		if err := CheckText(k, v, MaxSettingValueBytes, false, true); err != nil {
			return err
		}
	}
	return nil
}

// ApplySettings returns cur with changes made (an empty value removes a
// setting), or ErrInvalid when that holds too many.
func ApplySettings(cur, changes map[string]string) (map[string]string, error) {
	next := maps.Clone(cur)
	if next == nil {
		next = map[string]string{}
	}
	for k, v := range changes {
		if v = strings.TrimSpace(v); v == "" {
			delete(next, k)
		} else {
			next[k] = v
		}
	}
	if len(next) > MaxSettings {
		return nil, invalidf("at most %d settings", MaxSettings)
	}
	return next, nil
}
