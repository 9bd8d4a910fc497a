package bolt

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/agent-ls/agent-ls/schema"
)

// unmarshalRecord decodes a stored record's JSON as json.Unmarshal into a
// schema.MemoryRecord does. The records bucket holds json.Marshal's output,
// so a direct decoder handles its shape (exact field names, strings without
// escapes, no nulls) several times faster; anything else (an escape, a null,
// a duplicate or unknown key, the compact target form, invalid UTF-8 or
// JSON) goes to json.Unmarshal, which decides.
func unmarshalRecord(data []byte, r *schema.MemoryRecord) error {
	d := recordDecoder{data: data}
	if d.record(r) {
		return nil
	}
	*r = schema.MemoryRecord{}
	return json.Unmarshal(data, r)
}

// recordDecoder is the direct decoder: each method reports false when the
// input is not in the shape it handles (not necessarily invalid).
type recordDecoder struct {
	data []byte
	pos  int
}

func (d *recordDecoder) ws() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// next skips whitespace and consumes c.
func (d *recordDecoder) next(c byte) bool {
	d.ws()
	if d.pos < len(d.data) && d.data[d.pos] == c {
		d.pos++
		return true
	}
	return false
}

// peek skips whitespace and returns the next byte (0 at the end).
func (d *recordDecoder) peek() byte {
	d.ws()
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

// raw reads a string without escapes, returning its bytes in data.
func (d *recordDecoder) raw() ([]byte, bool) {
	if !d.next('"') {
		return nil, false
	}
	start := d.pos
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			s := d.data[start:d.pos]
			d.pos++
			return s, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(d.data[d.pos:])
			if r == utf8.RuneError && size == 1 {
				return nil, false
			}
			d.pos += size
		default:
			d.pos++
		}
	}
	return nil, false
}

func (d *recordDecoder) str(out *string) bool {
	b, ok := d.raw()
	if ok {
		*out = string(b)
	}
	return ok
}

// object reads {"key": value, ...}, calling field with each key and the
// decoder at the value; field reports false for a key it does not handle
// and may not see the same key twice.
func (d *recordDecoder) object(field func(key []byte) bool) bool {
	if !d.next('{') {
		return false
	}
	if d.next('}') {
		return true
	}
	for {
		key, ok := d.raw()
		if !ok || !d.next(':') || !field(key) {
			return false
		}
		if d.next('}') {
			return true
		}
		if !d.next(',') {
			return false
		}
	}
}

// array reads [value, ...], calling elem at each value.
func (d *recordDecoder) array(elem func() bool) bool {
	if !d.next('[') {
		return false
	}
	if d.next(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if d.next(']') {
			return true
		}
		if !d.next(',') {
			return false
		}
	}
}

// once guards a struct's keys against repeats (json.Unmarshal's rules for
// a repeated key are left to it).
type once uint32

func (o *once) first(bit uint) bool {
	if *o&(1<<bit) != 0 {
		return false
	}
	*o |= 1 << bit
	return true
}

func (d *recordDecoder) record(r *schema.MemoryRecord) bool {
	ok := d.recordObject(r)
	d.ws()
	return ok && d.pos == len(d.data)
}

// recordObject reads a record's object, leaving the decoder after it.
func (d *recordDecoder) recordObject(r *schema.MemoryRecord) bool {
	var seen once
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return seen.first(0) && d.str(&r.ID)
		case "scope":
			if !seen.first(1) {
				return false
			}
			r.Scope = map[string]string{}
			return d.object(func(k []byte) bool {
				var v string
				if !d.str(&v) {
					return false
				}
				r.Scope[string(k)] = v
				return true
			})
		case "kind":
			var s string
			ok := seen.first(2) && d.str(&s)
			r.Kind = schema.Kind(s)
			return ok
		case "content":
			return seen.first(3) && d.str(&r.Content)
		case "tags":
			if !seen.first(4) {
				return false
			}
			r.Tags = []string{}
			return d.array(func() bool {
				var s string
				if !d.str(&s) {
					return false
				}
				r.Tags = append(r.Tags, s)
				return true
			})
		case "provenance":
			return seen.first(5) && d.provenance(&r.Provenance)
		case "createdAt":
			return seen.first(6) && d.str(&r.CreatedAt)
		case "updatedAt":
			return seen.first(7) && d.str(&r.UpdatedAt)
		case "invalidAt":
			return seen.first(8) && d.str(&r.InvalidAt)
		case "invalidReason":
			return seen.first(9) && d.str(&r.InvalidReason)
		case "supersededBy":
			return seen.first(10) && d.str(&r.SupersededBy)
		case "expiresAt":
			return seen.first(11) && d.str(&r.ExpiresAt)
		case "target":
			if !seen.first(12) {
				return false
			}
			r.Target = &schema.MemoryTarget{}
			return d.target(r.Target)
		case "payload":
			return seen.first(13) && d.payload(&r.Payload)
		case "supports":
			if !seen.first(14) {
				return false
			}
			r.Supports = []schema.Support{}
			return d.array(func() bool {
				r.Supports = append(r.Supports, schema.Support{})
				return d.support(&r.Supports[len(r.Supports)-1])
			})
		}
		return false
	})
}

func (d *recordDecoder) provenance(p *schema.Provenance) bool {
	var seen once
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "conversationId":
			return seen.first(0) && d.str(&p.ConversationID)
		case "runId":
			return seen.first(1) && d.str(&p.RunID)
		case "author":
			return seen.first(2) && d.str(&p.Author)
		case "at":
			return seen.first(3) && d.str(&p.At)
		case "restoredFrom":
			return seen.first(4) && d.str(&p.RestoredFrom)
		}
		return false
	})
}

func (d *recordDecoder) support(s *schema.Support) bool {
	var seen once
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "conversationId":
			return seen.first(0) && d.str(&s.ConversationID)
		case "runId":
			return seen.first(1) && d.str(&s.RunID)
		case "at":
			return seen.first(2) && d.str(&s.At)
		}
		return false
	})
}

// target reads the union object form (the compact string form is left to
// json.Unmarshal and MemoryTarget.UnmarshalJSON).
func (d *recordDecoder) target(t *schema.MemoryTarget) bool {
	var seen once
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "primitive":
			var s string
			ok := seen.first(0) && d.str(&s)
			t.Primitive = schema.Primitive(s)
			return ok
		case "section":
			return seen.first(1) && d.str(&t.Section)
		case "key":
			return seen.first(2) && d.str(&t.Key)
		case "domain":
			return seen.first(3) && d.str(&t.Domain)
		case "slot":
			return seen.first(4) && d.str(&t.Slot)
		case "judgmentDomain":
			return seen.first(5) && d.str(&t.JudgmentDomain)
		case "capability":
			return seen.first(6) && d.str(&t.Capability)
		}
		return false
	})
}

// payload copies the payload value's bytes, as json.RawMessage does: an
// object or array, validated with json.Valid (anything else is left to
// json.Unmarshal).
func (d *recordDecoder) payload(out *json.RawMessage) bool {
	c := d.peek()
	if c != '{' && c != '[' {
		return false
	}
	start, depth := d.pos, 0
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case '"':
			// Skip the string, escapes included; json.Valid checks it.
			d.pos++
			for d.pos < len(d.data) && d.data[d.pos] != '"' {
				if d.data[d.pos] == '\\' {
					d.pos++
				}
				d.pos++
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				d.pos++
				v := d.data[start:d.pos]
				if !json.Valid(v) {
					return false
				}
				*out = append(json.RawMessage(nil), v...)
				return true
			}
		}
		d.pos++
	}
	return false
}
