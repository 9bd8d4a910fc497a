package lsp

import (
	"strconv"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/schema"
)

// A tolerant scan of JSON text for completion: it reads the text before the
// cursor as a JSON value being typed (unterminated strings end at the line's
// end, a missing comma is assumed where a new key or item starts, a stray
// character is skipped) to find the object or array the cursor is in and
// whether a key or a value is being typed, then reads on to the end of that
// object for the keys already written after the cursor. It never fails on
// malformed text, so completion works on the line being typed.

// jsonFrame is one open object or array.
type jsonFrame struct {
	ptr   string
	array bool
	index int    // arrays: the current item's index
	key   string // objects: the key the current value belongs to
	state jsonState
	keys  map[string]bool // objects: keys written so far
}

type jsonState int

const (
	jsExpectKey   jsonState = iota // object: before a key
	jsAfterKey                     // object: after a key, before ':'
	jsExpectValue                  // after ':' or '[' or ',' in an array
	jsAfterValue                   // after a value, before ',' or the close
)

// jsonScanner walks the text one byte at a time.
type jsonScanner struct {
	text  []byte
	stack []*jsonFrame
	root  jsonState // the top level: expecting the value or done
	// str is set inside a string: where it opened and whether it is a key.
	inStr, strKey bool
	strStart      int
	esc           bool
	// inWord is set inside a bare scalar (number, true, null, a typo).
	inWord    bool
	wordStart int
}

func (sc *jsonScanner) top() *jsonFrame {
	if len(sc.stack) == 0 {
		return nil
	}
	return sc.stack[len(sc.stack)-1]
}

// valueDone marks the current value finished.
func (sc *jsonScanner) valueDone() {
	if f := sc.top(); f != nil {
		f.state = jsAfterValue
	} else {
		sc.root = jsAfterValue
	}
}

// childPtr is the pointer of a value starting in the top frame.
func (sc *jsonScanner) childPtr() string {
	f := sc.top()
	if f == nil {
		return ""
	}
	if f.array {
		return schema.JoinPointer(f.ptr, strconv.Itoa(f.index))
	}
	return schema.JoinPointer(f.ptr, f.key)
}

// startValue is called where a value begins; in an array after a value it
// assumes the missing comma.
func (sc *jsonScanner) startValue() {
	if f := sc.top(); f != nil && f.array && f.state == jsAfterValue {
		f.index++
	}
}

// step consumes text[i]; onKey is called with each finished key and the
// depth of its object.
func (sc *jsonScanner) step(i int, onKey func(key string, depth int)) {
	c := sc.text[i]
	if sc.inStr {
		switch {
		case sc.esc:
			sc.esc = false
		case c == '\\':
			sc.esc = true
		case c == '"' || c == '\n' || c == '\r':
			sc.inStr = false
			s := sc.strValue(sc.strStart, i)
			if sc.strKey {
				f := sc.top()
				f.key, f.state = s, jsAfterKey
				f.keys[s] = true
				if onKey != nil {
					onKey(s, len(sc.stack))
				}
			} else {
				sc.valueDone()
			}
		}
		return
	}
	if sc.inWord {
		if isWordByte(c) {
			return
		}
		sc.inWord = false
		sc.valueDone()
	}
	f := sc.top()
	switch c {
	case ' ', '\t', '\r', '\n':
	case '"':
		sc.inStr, sc.strStart, sc.esc = true, i, false
		// A string where a key may start is a key (a missing comma is
		// assumed after a value); anywhere else it is a value.
		sc.strKey = f != nil && !f.array && (f.state == jsExpectKey || f.state == jsAfterValue)
		if !sc.strKey {
			sc.startValue()
		}
	case ':':
		if f != nil && !f.array && f.state == jsAfterKey {
			f.state = jsExpectValue
		}
	case ',':
		if f == nil {
			return
		}
		if f.array {
			if f.state == jsAfterValue {
				f.index++
			}
			f.state = jsExpectValue
		} else {
			f.state = jsExpectKey
		}
	case '{', '[':
		if f != nil && !f.array && f.state != jsExpectValue {
			return // an object where a key belongs: skip it
		}
		sc.startValue()
		ptr := sc.childPtr()
		nf := &jsonFrame{ptr: ptr, array: c == '[', state: jsExpectKey, keys: map[string]bool{}}
		if nf.array {
			nf.state = jsExpectValue
		}
		sc.stack = append(sc.stack, nf)
	case '}', ']':
		if f != nil && f.array == (c == ']') {
			sc.stack = sc.stack[:len(sc.stack)-1]
			sc.valueDone()
		}
	default:
		if isWordByte(c) && (f == nil || f.array || f.state == jsExpectValue) {
			sc.startValue()
			sc.inWord, sc.wordStart = true, i
		}
	}
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == '_' || c >= 0x80
}

// strValue decodes the string opened at start and ending before end.
func (sc *jsonScanner) strValue(start, end int) string {
	raw := string(sc.text[start:end]) + `"`
	if s, err := strconv.Unquote(raw); err == nil {
		return s
	}
	return string(sc.text[start+1 : end])
}

// jsonScanContext is the completion context at pos in JSON text that may not
// parse.
func jsonScanContext(text []byte, pos protocol.Position) (completionContext, bool) {
	off, ok := offsetOf(text, pos)
	if !ok {
		return completionContext{}, false
	}
	sc := &jsonScanner{text: text}
	for i := 0; i < off; i++ {
		sc.step(i, nil)
	}
	f := sc.top()
	if f == nil {
		return completionContext{}, false // outside the top-level object
	}
	cc := completionContext{indent: -1, replace: protocol.Range{Start: pos, End: pos}}
	replaceFrom := func(start int) {
		end := off
		// Over the rest of the string or word after the cursor.
		for end < len(text) && text[end] != '\n' && text[end] != '\r' {
			if sc.inStr && text[end] == '"' && text[end-1] != '\\' {
				end++
				break
			}
			if !sc.inStr && !isWordByte(text[end]) {
				break
			}
			end++
		}
		cc.replace = protocol.Range{Start: positionOf(text, start), End: positionOf(text, end)}
	}
	typingKey := false
	switch {
	case sc.inStr && sc.strKey:
		typingKey = true
		cc.parent = f.ptr
		replaceFrom(sc.strStart)
	case sc.inStr || sc.inWord:
		start := sc.strStart
		if sc.inWord {
			start = sc.wordStart
		}
		if f.array {
			cc.parent, cc.dash = schema.JoinPointer(f.ptr, strconv.Itoa(f.index)), true
		} else {
			cc.parent, cc.key = f.ptr, f.key
		}
		replaceFrom(start)
	case f.array && f.state == jsExpectValue:
		cc.parent, cc.dash = schema.JoinPointer(f.ptr, strconv.Itoa(f.index)), true
	case f.array:
		// After an item whose comma is not written yet: the next item,
		// inserted with its comma.
		cc.parent, cc.dash, cc.sep = schema.JoinPointer(f.ptr, strconv.Itoa(f.index+1)), true, ", "
	case f.state == jsExpectKey:
		typingKey = true
		cc.parent = f.ptr
	case f.state == jsAfterValue:
		typingKey, cc.parent, cc.sep = true, f.ptr, ", "
	case f.state == jsExpectValue:
		cc.parent, cc.key = f.ptr, f.key
	default: // after a key, before its colon
		return completionContext{}, false
	}
	if !typingKey {
		return cc, true
	}
	// The keys of this object, before the cursor and after it.
	cc.siblings = map[string]bool{}
	for k := range f.keys {
		cc.siblings[k] = true
	}
	depth := len(sc.stack)
	skip := sc.inStr // the key being typed closes after the cursor
	for i := off; i < len(text) && len(sc.stack) >= depth; i++ {
		sc.step(i, func(key string, d int) {
			if d != depth {
				return
			}
			if skip {
				skip = false
				return
			}
			cc.siblings[key] = true
		})
	}
	return cc, true
}

// offsetOf is the byte offset of a UTF-16 position in text (a character
// past the end of its line is the line's end).
func offsetOf(text []byte, pos protocol.Position) (int, bool) {
	off, reached := lineStart(text, int(pos.Line))
	if reached < int(pos.Line) {
		return 0, false
	}
	end := lineContentEnd(text, off)
	return off + byteOffset(string(text[off:end]), int(pos.Character)), true
}

// positionOf is the UTF-16 position of a byte offset in text.
func positionOf(text []byte, off int) protocol.Position {
	line, start := 0, 0
	for i := nextBreak(text, 0); i >= 0 && i <= off; i = nextBreak(text, i) {
		line, start = line+1, i
	}
	return protocol.Position{Line: uint32(line), Character: uint32(utf16Len(text[start:off]))}
}
