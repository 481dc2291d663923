package mdtext

import "strings"

// MaxDepth bounds the nesting a Markdown text may have to be parsed as
// Markdown: containers on one line (block quotes, list items, indentation)
// and open brackets in one paragraph. The parser's work and memory grow
// with the nesting (a list nested 5,000 deep, 25 MB of text, took 3 GB);
// a text nested deeper is shown and indexed as plain text. No real
// document comes near it.
const MaxDepth = 64

// TooDeep reports whether src nests deeper than MaxDepth. O(len(src)).
func TooDeep(src string) bool {
	brackets := 0
	for line := range strings.Lines(src) {
		if strings.TrimSpace(line) == "" {
			brackets = 0 // a paragraph ends
			continue
		}
		if containerDepth(line) > MaxDepth {
			return true
		}
		for i := 0; i < len(line); i++ {
			switch line[i] {
			case '[':
				if brackets++; brackets > MaxDepth {
					return true
				}
			case ']':
				brackets = max(brackets-1, 0)
			}
		}
	}
	return false
}

// containerDepth estimates the containers a line opens: its block-quote
// markers, list markers and indentation (two columns a level) before its
// text.
func containerDepth(line string) int {
	depth, spaces := 0, 0
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == ' ':
			spaces++
		case c == '\t':
			spaces += 4
		case c == '>':
			depth++
		case (c == '-' || c == '*' || c == '+') && i+1 < len(line) && (line[i+1] == ' ' || line[i+1] == '\t'):
			depth++
		case c >= '0' && c <= '9':
			j := i
			for j < len(line) && line[j] >= '0' && line[j] <= '9' {
				j++
			}
			if j+1 >= len(line) || (line[j] != '.' && line[j] != ')') || (line[j+1] != ' ' && line[j+1] != '\t') {
				return depth + spaces/2
			}
			depth++
			i = j
		default:
			return depth + spaces/2
		}
	}
	return depth + spaces/2
}
