// yaml.go: a small YAML subset reader for cloud-init metadata (Go's standard library has no YAML).
//
// Accepted: block mappings ("key: value"), block sequences ("- item", "- key: value" items, and sequences
// indented at the same column as their parent key), nested by indentation with spaces; plain, 'single' and
// "double" quoted scalars; flow sequences and mappings ([a, "b"], {a: b}) on one line; literal and folded block
// scalars (| and >, kept as plain lines); "#" comments; a leading "---". Not accepted: anchors, aliases, tags,
// multi-document streams, multi-line flow collections. All scalars stay strings.
package main

import (
	"fmt"
	"strings"
)

type yline struct {
	indent int
	text   string // comment-stripped, trimmed
	raw    string // original line, for block scalars
	blank  bool
	num    int
}

type yparser struct {
	lines []yline
	pos   int
}

// stripComment removes a "#" comment that starts at the line start or after whitespace, outside quotes.
func stripComment(s string) string {
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i]
		}
	}
	return s
}

func parseYAML(doc string) (interface{}, error) {
	p := &yparser{}
	for i, raw := range strings.Split(strings.ReplaceAll(doc, "\r\n", "\n"), "\n") {
		indent := len(raw) - len(strings.TrimLeft(raw, " "))
		text := strings.TrimSpace(stripComment(raw))
		if i == 0 && text == "---" {
			text = ""
		}
		if strings.HasPrefix(strings.TrimLeft(raw, " "), "\t") {
			return nil, fmt.Errorf("yaml line %d: tab indentation", i+1)
		}
		p.lines = append(p.lines, yline{indent: indent, text: text, raw: raw, blank: text == "", num: i + 1})
	}
	p.skipBlank()
	if p.pos >= len(p.lines) {
		return map[string]interface{}{}, nil
	}
	v, err := p.block(p.lines[p.pos].indent)
	if err != nil {
		return nil, err
	}
	p.skipBlank()
	if p.pos < len(p.lines) {
		return nil, fmt.Errorf("yaml line %d: unexpected indentation", p.lines[p.pos].num)
	}
	return v, nil
}

func (p *yparser) skipBlank() {
	for p.pos < len(p.lines) && p.lines[p.pos].blank {
		p.pos++
	}
}

func isSeqItem(t string) bool {
	return t == "-" || strings.HasPrefix(t, "- ")
}

// block parses the mapping or sequence whose lines start at column indent.
func (p *yparser) block(indent int) (interface{}, error) {
	p.skipBlank()
	if p.pos >= len(p.lines) {
		return nil, nil
	}
	if isSeqItem(p.lines[p.pos].text) {
		return p.sequence(indent)
	}
	return p.mapping(indent)
}

func (p *yparser) sequence(indent int) (interface{}, error) {
	out := []interface{}{}
	for {
		p.skipBlank()
		if p.pos >= len(p.lines) {
			return out, nil
		}
		l := &p.lines[p.pos]
		if l.indent != indent || !isSeqItem(l.text) {
			if l.indent > indent {
				return nil, fmt.Errorf("yaml line %d: bad indentation", l.num)
			}
			return out, nil
		}
		rest := strings.TrimSpace(strings.TrimPrefix(l.text, "-"))
		if rest == "" {
			p.pos++
			p.skipBlank()
			if p.pos < len(p.lines) && p.lines[p.pos].indent > indent {
				v, err := p.block(p.lines[p.pos].indent)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			} else {
				out = append(out, nil)
			}
			continue
		}
		if _, _, ok := splitKey(rest); ok || isSeqItem(rest) {
			// "- key: value": the item is a block whose first line starts after "- ".
			after := strings.TrimLeft(l.raw, " ")[1:] // the text after "-"
			col := indent + 1 + (len(after) - len(strings.TrimLeft(after, " ")))
			l.indent = col
			l.text = rest
			l.raw = strings.Repeat(" ", col) + rest
			v, err := p.block(col)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			continue
		}
		v, err := flowValue(rest)
		if err != nil {
			return nil, fmt.Errorf("yaml line %d: %v", l.num, err)
		}
		out = append(out, v)
		p.pos++
	}
}

// splitKey splits "key: value" (or "key:") outside quotes.
func splitKey(t string) (string, string, bool) {
	if t == "" || t[0] == '[' || t[0] == '{' {
		return "", "", false
	}
	var q byte
	for i := 0; i < len(t); i++ {
		c := t[i]
		if q != 0 {
			if c == q {
				q = 0
			}
			continue
		}
		if (c == '"' || c == '\'') && i == 0 {
			q = c
			continue
		}
		if c == ':' && (i+1 == len(t) || t[i+1] == ' ') {
			key, err := scalar(strings.TrimSpace(t[:i]))
			if err != nil {
				return "", "", false
			}
			return key, strings.TrimSpace(t[i+1:]), true
		}
	}
	return "", "", false
}

func (p *yparser) mapping(indent int) (interface{}, error) {
	out := map[string]interface{}{}
	for {
		p.skipBlank()
		if p.pos >= len(p.lines) {
			return out, nil
		}
		l := p.lines[p.pos]
		if l.indent < indent {
			return out, nil
		}
		if l.indent > indent {
			return nil, fmt.Errorf("yaml line %d: bad indentation", l.num)
		}
		if isSeqItem(l.text) {
			return out, nil // a sequence at the parent's column ends this mapping
		}
		key, val, ok := splitKey(l.text)
		if !ok {
			return nil, fmt.Errorf("yaml line %d: expected key: value", l.num)
		}
		p.pos++
		switch {
		case val == "":
			p.skipBlank()
			if p.pos < len(p.lines) && p.lines[p.pos].indent > indent {
				v, err := p.block(p.lines[p.pos].indent)
				if err != nil {
					return nil, err
				}
				out[key] = v
			} else if p.pos < len(p.lines) && p.lines[p.pos].indent == indent && isSeqItem(p.lines[p.pos].text) {
				v, err := p.sequence(indent)
				if err != nil {
					return nil, err
				}
				out[key] = v
			} else {
				out[key] = nil
			}
		case val[0] == '|' || val[0] == '>':
			out[key] = p.blockScalar(indent, val[0] == '>')
		default:
			v, err := flowValue(val)
			if err != nil {
				return nil, fmt.Errorf("yaml line %d: %v", l.num, err)
			}
			out[key] = v
		}
	}
}

// blockScalar collects the lines indented deeper than indent (blank lines included).
func (p *yparser) blockScalar(indent int, folded bool) string {
	var lines []string
	base := -1
	for p.pos < len(p.lines) {
		l := p.lines[p.pos]
		if strings.TrimSpace(l.raw) != "" {
			ind := len(l.raw) - len(strings.TrimLeft(l.raw, " "))
			if ind <= indent {
				break
			}
			if base < 0 {
				base = ind
			}
			if ind < base {
				break
			}
			lines = append(lines, l.raw[base:])
		} else {
			lines = append(lines, "")
		}
		p.pos++
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	sep := "\n"
	if folded {
		sep = " "
	}
	return strings.Join(lines, sep) + "\n"
}

// flowValue parses a scalar, [a, b] or {a: b} written on one line.
func flowValue(s string) (interface{}, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if s[0] == '[' || s[0] == '{' {
		v, rest, err := flowNode(s)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(rest) != "" {
			return nil, fmt.Errorf("trailing text after flow collection")
		}
		return v, nil
	}
	return scalar(s)
}

// flowNode parses one node at the start of s and returns the rest.
func flowNode(s string) (interface{}, string, error) {
	s = strings.TrimLeft(s, " ")
	if s == "" {
		return nil, "", fmt.Errorf("unexpected end of flow collection")
	}
	switch s[0] {
	case '[':
		out := []interface{}{}
		s = strings.TrimLeft(s[1:], " ")
		for {
			if strings.HasPrefix(s, "]") {
				return out, s[1:], nil
			}
			v, rest, err := flowNode(s)
			if err != nil {
				return nil, "", err
			}
			out = append(out, v)
			s = strings.TrimLeft(rest, " ")
			if strings.HasPrefix(s, ",") {
				s = strings.TrimLeft(s[1:], " ")
			} else if !strings.HasPrefix(s, "]") {
				return nil, "", fmt.Errorf("expected , or ]")
			}
		}
	case '{':
		out := map[string]interface{}{}
		s = strings.TrimLeft(s[1:], " ")
		for {
			if strings.HasPrefix(s, "}") {
				return out, s[1:], nil
			}
			k, rest, err := flowScalar(s, ":")
			if err != nil {
				return nil, "", err
			}
			rest = strings.TrimLeft(rest, " ")
			if !strings.HasPrefix(rest, ":") {
				return nil, "", fmt.Errorf("expected : in flow mapping")
			}
			v, rest2, err := flowNode(rest[1:])
			if err != nil {
				return nil, "", err
			}
			out[k] = v
			s = strings.TrimLeft(rest2, " ")
			if strings.HasPrefix(s, ",") {
				s = strings.TrimLeft(s[1:], " ")
			} else if !strings.HasPrefix(s, "}") {
				return nil, "", fmt.Errorf("expected , or }")
			}
		}
	}
	return flowScalar(s, ",]}")
}

// flowScalar reads a quoted or plain scalar ending before any of stops.
func flowScalar(s, stops string) (string, string, error) {
	if s != "" && (s[0] == '"' || s[0] == '\'') {
		end := closingQuote(s)
		if end < 0 {
			return "", "", fmt.Errorf("unterminated quote")
		}
		v, err := scalar(s[:end+1])
		return v, s[end+1:], err
	}
	i := strings.IndexAny(s, stops)
	if i < 0 {
		i = len(s)
	}
	return strings.TrimSpace(s[:i]), s[i:], nil
}

// closingQuote returns the index of the quote closing s[0], or -1.
func closingQuote(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case q == '\'' && s[i] == '\'' && i+1 < len(s) && s[i+1] == '\'':
			i++
		case s[i] == q:
			return i
		}
	}
	return -1
}

// scalar unquotes a plain, 'single' or "double" quoted scalar.
func scalar(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	switch s[0] {
	case '\'':
		if len(s) < 2 || s[len(s)-1] != '\'' {
			return "", fmt.Errorf("bad single-quoted scalar")
		}
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'"), nil
	case '"':
		if len(s) < 2 || s[len(s)-1] != '"' {
			return "", fmt.Errorf("bad double-quoted scalar")
		}
		var b strings.Builder
		in := s[1 : len(s)-1]
		for i := 0; i < len(in); i++ {
			if in[i] != '\\' || i+1 == len(in) {
				b.WriteByte(in[i])
				continue
			}
			i++
			switch in[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(in[i])
			}
		}
		return b.String(), nil
	}
	return s, nil
}
