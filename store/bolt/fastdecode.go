package bolt

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// unmarshalRecord decodes a stored record's JSON as json.Unmarshal into a
// schema.MemoryRecord does. The records bucket holds json.Marshal's output,
// so a direct decoder handles its shape (exact field names, strings without
// escapes, no nulls) several times faster; anything else (an escape, a null,
// a duplicate or unknown key, the compact target form, invalid UTF-8 or
// JSON) goes to json.Unmarshal, which decides.
func unmarshalRecord(data []byte, r *schema.MemoryRecord) error {
	return unmarshalRecordShared(data, r, nil)
}

// unmarshalRecordShared is unmarshalRecord that takes the record's scope
// map from scopes when one was decoded from the same bytes, else puts the
// one it decodes there (nil scopes: none). The map is then shared: the
// records of one read that share it are read, not modified (see sharer).
func unmarshalRecordShared(data []byte, r *schema.MemoryRecord, scopes sharedScopes) error {
	d := recordDecoder{data: data, scopes: scopes}
	if d.record(r) {
		return nil
	}
	*r = schema.MemoryRecord{}
	return json.Unmarshal(data, r)
}

// sharedScopes are scope maps by the bytes they were decoded from.
type sharedScopes map[string]map[string]string

// recordDecoder is the direct decoder: each method reports false when the
// input is not in the shape it handles (not necessarily invalid).
type recordDecoder struct {
	data []byte
	pos  int
	// like and likeEntry, when set, are a record and a ledger entry the
	// decoded values are expected to repeat (Vouch: the record as
	// rendered, the entry about it decoded before): a string equal to
	// theirs in the same place is theirs, not a copy (strLike).
	like      *schema.MemoryRecord
	likeEntry *store.LedgerEntry
	// scratch, when set, gives the records, scope maps, targets and
	// evidence an entry's decode needs (Vouch's, for one check only).
	scratch *scratch
	// scopes, when set, holds the scope maps decoded so far by their
	// bytes: a scope stored as the same bytes gets the same map.
	scopes sharedScopes
}

// scratch is what a decoder for one check takes its records' parts from
// instead of allocating them: Vouch decodes a record's ledger entries,
// checks them and drops them, record after record, so the parts one check
// used are free for the next (reset). A part is zeroed (a map emptied)
// when taken. The zero value is ready; one goroutine uses it.
type scratch struct {
	recs      parts[schema.MemoryRecord]
	targets   parts[schema.MemoryTarget]
	evidences parts[store.Evidence]
	scopes    []map[string]string
	nScopes   int
}

// reset makes every part free again.
func (s *scratch) reset() {
	s.recs.n, s.targets.n, s.evidences.n, s.nScopes = 0, 0, 0, 0
}

// scope returns an empty map, free until the next reset.
func (s *scratch) scope() map[string]string {
	if s.nScopes == len(s.scopes) {
		s.scopes = append(s.scopes, map[string]string{})
	}
	m := s.scopes[s.nScopes]
	s.nScopes++
	clear(m)
	return m
}

// parts are the values of one type a scratch hands out.
type parts[T any] struct {
	list []*T
	n    int
}

// take returns a zero value, free until the next reset.
func (p *parts[T]) take() *T {
	if p.n == len(p.list) {
		p.list = append(p.list, new(T))
	}
	v := p.list[p.n]
	p.n++
	var zero T
	*v = zero
	return v
}

// Read-only stand-ins for a decoder without like or likeEntry: every
// string they offer is empty.
var (
	noRecord schema.MemoryRecord
	noTarget schema.MemoryTarget
	noEntry  store.LedgerEntry
)

// likeRecord is d.like, or noRecord.
func (d *recordDecoder) likeRecord() *schema.MemoryRecord {
	if d.like != nil {
		return d.like
	}
	return &noRecord
}

// likeLedgerEntry is d.likeEntry, or noEntry.
func (d *recordDecoder) likeLedgerEntry() *store.LedgerEntry {
	if d.likeEntry != nil {
		return d.likeEntry
	}
	return &noEntry
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

// strLike is str that, when the string's bytes equal one of known, stores
// that string instead of a copy of the bytes. Go strings are immutable and
// the bytes are the same, so *out holds exactly the value a copy would:
// whatever compares it with another value compares the same bytes (Vouch
// compares the record as rendered with its ledger entries' replay field by
// field, never by identity). Only the copy is saved.
func (d *recordDecoder) strLike(out *string, known ...string) bool {
	b, ok := d.raw()
	if !ok {
		return false
	}
	for _, k := range known {
		if string(b) == k {
			*out = k
			return true
		}
	}
	*out = string(b)
	return true
}

// stringAt is list[i], or "" past its end.
func stringAt(list []string, i int) string {
	if i < len(list) {
		return list[i]
	}
	return ""
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
	h := d.likeRecord()
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return seen.first(0) && d.strLike(&r.ID, h.ID)
		case "scope":
			if !seen.first(1) {
				return false
			}
			var from []byte
			if d.scopes != nil {
				// The scope's bytes (strings without escapes, else they
				// go to json.Unmarshal): a map decoded from the same is
				// the same map.
				d.ws()
				start := d.pos
				if !d.object(func([]byte) bool { _, ok := d.raw(); return ok }) {
					return false
				}
				from = d.data[start:d.pos]
				if m, ok := d.scopes[string(from)]; ok {
					r.Scope = m
					return true
				}
				d.pos = start
			}
			var m map[string]string
			if d.scratch != nil {
				m = d.scratch.scope()
			} else {
				m = map[string]string{}
			}
			r.Scope = m
			ok := d.object(func(k []byte) bool {
				name, known := "", ""
				for hk, hv := range h.Scope {
					if hk == string(k) {
						name, known = hk, hv
						break
					}
				}
				if name == "" {
					name = string(k)
				}
				var v string
				if !d.strLike(&v, known) {
					return false
				}
				m[name] = v
				return true
			})
			if ok && from != nil && len(d.scopes) < maxSharedScopes {
				d.scopes[string(from)] = m
			}
			return ok
		case "kind":
			var s string
			ok := seen.first(2) && d.strLike(&s, string(h.Kind))
			r.Kind = schema.Kind(s)
			return ok
		case "content":
			return seen.first(3) && d.strLike(&r.Content, h.Content)
		case "tags":
			if !seen.first(4) {
				return false
			}
			r.Tags = []string{}
			return d.array(func() bool {
				var s string
				if !d.strLike(&s, stringAt(h.Tags, len(r.Tags))) {
					return false
				}
				r.Tags = append(r.Tags, s)
				return true
			})
		case "provenance":
			return seen.first(5) && d.provenance(&r.Provenance, &h.Provenance, r.CreatedAt)
		case "createdAt":
			return seen.first(6) && d.strLike(&r.CreatedAt, h.CreatedAt, r.Provenance.At)
		case "updatedAt":
			return seen.first(7) && d.strLike(&r.UpdatedAt, h.UpdatedAt, r.CreatedAt)
		case "invalidAt":
			return seen.first(8) && d.strLike(&r.InvalidAt, h.InvalidAt)
		case "invalidReason":
			return seen.first(9) && d.strLike(&r.InvalidReason, h.InvalidReason)
		case "supersededBy":
			return seen.first(10) && d.strLike(&r.SupersededBy, h.SupersededBy)
		case "expiresAt":
			return seen.first(11) && d.strLike(&r.ExpiresAt, h.ExpiresAt)
		case "target":
			if !seen.first(12) {
				return false
			}
			if d.scratch != nil {
				r.Target = d.scratch.targets.take()
			} else {
				r.Target = &schema.MemoryTarget{}
			}
			ht := h.Target
			if ht == nil {
				ht = &noTarget
			}
			return d.target(r.Target, ht)
		case "payload":
			return seen.first(13) && d.payload(&r.Payload)
		case "supports":
			if !seen.first(14) {
				return false
			}
			r.Supports = []schema.Support{}
			return d.array(func() bool {
				var hs schema.Support
				if i := len(r.Supports); i < len(h.Supports) {
					hs = h.Supports[i]
				}
				r.Supports = append(r.Supports, schema.Support{})
				return d.support(&r.Supports[len(r.Supports)-1], &hs)
			})
		}
		return false
	})
}

// provenance reads a provenance; h offers its strings, and created (the
// record's creation time, when read before) the time (strLike).
func (d *recordDecoder) provenance(p, h *schema.Provenance, created string) bool {
	var seen once
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "conversationId":
			return seen.first(0) && d.strLike(&p.ConversationID, h.ConversationID)
		case "runId":
			return seen.first(1) && d.strLike(&p.RunID, h.RunID)
		case "author":
			return seen.first(2) && d.strLike(&p.Author, h.Author)
		case "at":
			return seen.first(3) && d.strLike(&p.At, h.At, created)
		case "restoredFrom":
			return seen.first(4) && d.strLike(&p.RestoredFrom, h.RestoredFrom)
		}
		return false
	})
}

// support reads a support; h offers its strings (strLike).
func (d *recordDecoder) support(s, h *schema.Support) bool {
	var seen once
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "conversationId":
			return seen.first(0) && d.strLike(&s.ConversationID, h.ConversationID)
		case "runId":
			return seen.first(1) && d.strLike(&s.RunID, h.RunID)
		case "at":
			return seen.first(2) && d.strLike(&s.At, h.At)
		}
		return false
	})
}

// target reads the union object form (the compact string form is left to
// json.Unmarshal and MemoryTarget.UnmarshalJSON); h offers its strings
// (strLike).
func (d *recordDecoder) target(t, h *schema.MemoryTarget) bool {
	var seen once
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "primitive":
			var s string
			ok := seen.first(0) && d.strLike(&s, string(h.Primitive))
			t.Primitive = schema.Primitive(s)
			return ok
		case "section":
			return seen.first(1) && d.strLike(&t.Section, h.Section)
		case "key":
			return seen.first(2) && d.strLike(&t.Key, h.Key)
		case "domain":
			return seen.first(3) && d.strLike(&t.Domain, h.Domain)
		case "slot":
			return seen.first(4) && d.strLike(&t.Slot, h.Slot)
		case "judgmentDomain":
			return seen.first(5) && d.strLike(&t.JudgmentDomain, h.JudgmentDomain)
		case "capability":
			return seen.first(6) && d.strLike(&t.Capability, h.Capability)
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
