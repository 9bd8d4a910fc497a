package schema

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// parseJSON parses a JSON document into a node tree with positions. It is
// strict RFC 8259 JSON: no comments, no trailing commas, no duplicate keys.
func parseJSON(d *Document) (*node, error) {
	p := &jsonParser{d: d, src: d.src}
	if hasBOM(d.src) {
		p.i = len(bom) // the byte order mark is no JSON value
	}
	p.skipWS()
	if p.i >= len(p.src) {
		return nil, d.errAt(p.i, "invalid JSON: empty document")
	}
	n, err := p.value("", 0)
	if err != nil {
		return nil, err
	}
	p.skipWS()
	if p.i < len(p.src) {
		return nil, p.err(fmt.Sprintf("invalid JSON: unexpected %s after the top-level value", p.describe()))
	}
	return n, nil
}

type jsonParser struct {
	d   *Document
	src []byte
	i   int
}

func (p *jsonParser) err(msg string) *ParseError { return p.d.errAt(p.i, msg) }

func (p *jsonParser) describe() string {
	if p.i >= len(p.src) {
		return "end of file"
	}
	return strconv.QuoteRune(rune(p.src[p.i]))
}

func (p *jsonParser) skipWS() {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(ptr string, depth int) (*node, error) {
	if depth > MaxDepth {
		return nil, p.err(fmt.Sprintf("nesting deeper than %d levels", MaxDepth))
	}
	if p.i >= len(p.src) {
		return nil, p.err("invalid JSON: unexpected end of file, want a value")
	}
	start := p.i
	switch c := p.src[p.i]; {
	case c == '{':
		return p.object(ptr, depth)
	case c == '[':
		return p.array(ptr, depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &node{ptr: ptr, kind: kindScalar, value: s, val: p.d.lines.rng(start, p.i)}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		f, err := p.number()
		if err != nil {
			return nil, err
		}
		return &node{ptr: ptr, kind: kindScalar, value: f, val: p.d.lines.rng(start, p.i)}, nil
	default:
		for _, lit := range []struct {
			text string
			v    any
		}{{"true", true}, {"false", false}, {"null", nil}} {
			if p.i+len(lit.text) <= len(p.src) && string(p.src[p.i:p.i+len(lit.text)]) == lit.text {
				p.i += len(lit.text)
				return &node{ptr: ptr, kind: kindScalar, value: lit.v, val: p.d.lines.rng(start, p.i)}, nil
			}
		}
		return nil, p.err(fmt.Sprintf("invalid JSON: unexpected %s, want a value", p.describe()))
	}
}

func (p *jsonParser) object(ptr string, depth int) (*node, error) {
	start := p.i
	p.i++ // {
	n := &node{ptr: ptr, kind: kindObject}
	obj := map[string]any{}
	first := map[string]Position{}
	p.skipWS()
	if p.i < len(p.src) && p.src[p.i] == '}' {
		p.i++
		n.value, n.val = obj, p.d.lines.rng(start, p.i)
		return n, nil
	}
	for {
		p.skipWS()
		if p.i >= len(p.src) || p.src[p.i] != '"' {
			return nil, p.err(fmt.Sprintf("invalid JSON: unexpected %s, want a string key", p.describe()))
		}
		kstart := p.i
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		keyRange := p.d.lines.rng(kstart, p.i)
		if at, dup := first[key]; dup {
			p.i = kstart
			return nil, p.err(fmt.Sprintf("duplicate key %s (first on line %d)", quoteKey(key), at.Line+1))
		}
		first[key] = keyRange.Start
		p.skipWS()
		if p.i >= len(p.src) || p.src[p.i] != ':' {
			return nil, p.err(fmt.Sprintf("invalid JSON: unexpected %s, want ':' after the key", p.describe()))
		}
		p.i++
		p.skipWS()
		c, err := p.value(JoinPointer(ptr, key), depth+1)
		if err != nil {
			return nil, err
		}
		c.key = keyRange
		n.children = append(n.children, c)
		obj[key] = c.value
		p.skipWS()
		if p.i < len(p.src) && p.src[p.i] == ',' {
			p.i++
			p.skipWS()
			if p.i < len(p.src) && p.src[p.i] == '}' {
				return nil, p.err("invalid JSON: trailing comma before '}'")
			}
			continue
		}
		if p.i < len(p.src) && p.src[p.i] == '}' {
			p.i++
			break
		}
		return nil, p.err(fmt.Sprintf("invalid JSON: unexpected %s, want ',' or '}'", p.describe()))
	}
	n.value, n.val = obj, p.d.lines.rng(start, p.i)
	return n, nil
}

func (p *jsonParser) array(ptr string, depth int) (*node, error) {
	start := p.i
	p.i++ // [
	n := &node{ptr: ptr, kind: kindArray}
	arr := []any{}
	p.skipWS()
	if p.i < len(p.src) && p.src[p.i] == ']' {
		p.i++
		n.value, n.val = arr, p.d.lines.rng(start, p.i)
		return n, nil
	}
	for idx := 0; ; idx++ {
		p.skipWS()
		c, err := p.value(JoinPointer(ptr, idx), depth+1)
		if err != nil {
			return nil, err
		}
		if c.kind == kindScalar {
			c.key = c.val
		} else {
			s := c.val.Start.Offset
			c.key = p.d.lines.rng(s, s+1)
		}
		n.children = append(n.children, c)
		arr = append(arr, c.value)
		p.skipWS()
		if p.i < len(p.src) && p.src[p.i] == ',' {
			p.i++
			p.skipWS()
			if p.i < len(p.src) && p.src[p.i] == ']' {
				return nil, p.err("invalid JSON: trailing comma before ']'")
			}
			continue
		}
		if p.i < len(p.src) && p.src[p.i] == ']' {
			p.i++
			break
		}
		return nil, p.err(fmt.Sprintf("invalid JSON: unexpected %s, want ',' or ']'", p.describe()))
	}
	n.value, n.val = arr, p.d.lines.rng(start, p.i)
	return n, nil
}

// str reads a string token at p.i and returns its decoded value.
func (p *jsonParser) str() (string, error) {
	start := p.i
	simple := true
	for p.i++; p.i < len(p.src); p.i++ {
		switch c := p.src[p.i]; {
		case c == '"':
			p.i++
			tok := p.src[start:p.i]
			if simple {
				return string(tok[1 : len(tok)-1]), nil
			}
			var s string
			if err := json.Unmarshal(tok, &s); err != nil {
				p.i = start
				return "", p.err("invalid JSON: bad escape in string")
			}
			return s, nil
		case c == '\\':
			simple = false
			p.i++
		case c < 0x20:
			return "", p.err("invalid JSON: control character in string (line breaks and tabs must be escaped)")
		}
	}
	p.i = start
	return "", p.err("invalid JSON: unterminated string")
}

// number reads a number token per the JSON grammar.
func (p *jsonParser) number() (float64, error) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.src) && p.src[p.i] >= '0' && p.src[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.src[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.src) && p.src[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return 0, p.err("invalid JSON: malformed number")
	}
	if p.i < len(p.src) && p.src[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return 0, p.err("invalid JSON: malformed number")
		}
	}
	if p.i < len(p.src) && (p.src[p.i] == 'e' || p.src[p.i] == 'E') {
		p.i++
		if p.i < len(p.src) && (p.src[p.i] == '+' || p.src[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return 0, p.err("invalid JSON: malformed number")
		}
	}
	tok := string(p.src[start:p.i])
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil {
		p.i = start
		return 0, p.err(fmt.Sprintf("invalid JSON: number %s out of range", tok))
	}
	return f, nil
}
