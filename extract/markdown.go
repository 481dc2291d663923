package extract

import (
	"strings"
)

// MarkdownTitle returns the title of a Markdown document: the title of its
// YAML front matter, else its first "# " heading, else "".
func MarkdownTitle(s string) string {
	lines := strings.Split(s, "\n")
	i := 0
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for i = 1; i < len(lines) && strings.TrimSpace(lines[i]) != "---"; i++ {
			if v, ok := strings.CutPrefix(lines[i], "title:"); ok {
				if t := strings.Trim(strings.TrimSpace(v), `"'`); t != "" {
					return t
				}
			}
		}
		i++
	}
	fence := false
	for ; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~") {
			fence = !fence
			continue
		}
		if h, ok := strings.CutPrefix(l, "# "); ok && !fence {
			return strings.TrimSpace(strings.TrimRight(h, "#"))
		}
	}
	return ""
}

// TitleFromFileName makes a title of a file name: the extension dropped,
// separators turned to spaces, the first letter upper-cased
// ("getting-started.md" → "Getting started").
func TitleFromFileName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	name = collapse(strings.NewReplacer("-", " ", "_", " ").Replace(name))
	if name == "" {
		return ""
	}
	r := []rune(name)
	r[0] = []rune(strings.ToUpper(string(r[0])))[0]
	return string(r)
}
