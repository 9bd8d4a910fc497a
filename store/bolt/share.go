package bolt

import (
	"encoding/binary"
	"slices"

	"github.com/agent-ls/agent-ls/schema"
)

// sharer lets the records of one big read share their equal scope maps and
// their small repeated strings (kind, timestamps, provenance run and
// author). Decoded one by one, 100k candidates held a scope map each,
// about 330 bytes a record, and two such reads at once were the language
// server's peak memory at 1M records (issue 35). Candidates and Promoted
// say so: the records of one call are read, not modified. The zero value
// is ready to use.
type sharer struct {
	scopes map[string]map[string]string
	strs   map[string]string
	key    []byte
}

// Bounds on what one read remembers: past them, new values are kept as
// decoded (equal ones already remembered are still shared).
const (
	maxSharedScopes = 1024
	maxSharedStrs   = 4096
)

// record replaces r's scope map and small strings with equal ones an
// earlier record of the read holds.
func (s *sharer) record(r *schema.MemoryRecord) {
	r.Scope = s.scope(r.Scope)
	r.Kind = schema.Kind(s.str(string(r.Kind)))
	r.CreatedAt, r.UpdatedAt = s.str(r.CreatedAt), s.str(r.UpdatedAt)
	p := &r.Provenance
	p.At, p.RunID, p.Author = s.str(p.At), s.str(p.RunID), s.str(p.Author)
}

func (s *sharer) str(v string) string {
	if v == "" {
		return v
	}
	if t, ok := s.strs[v]; ok {
		return t
	}
	if s.strs == nil {
		s.strs = map[string]string{}
	}
	if len(s.strs) < maxSharedStrs {
		s.strs[v] = v
	}
	return v
}

// scope returns the map remembered for m's pairs, else m (remembered). A
// nil map stays nil: an empty scope and a missing one decode differently.
func (s *sharer) scope(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	var small [8]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	key := s.key[:0]
	for _, k := range keys {
		// Lengths first, so no pair of strings runs into the next.
		key = binary.AppendUvarint(key, uint64(len(k)))
		key = append(key, k...)
		key = binary.AppendUvarint(key, uint64(len(m[k])))
		key = append(key, m[k]...)
	}
	s.key = key
	if t, ok := s.scopes[string(key)]; ok {
		return t
	}
	if s.scopes == nil {
		s.scopes = map[string]map[string]string{}
	}
	if len(s.scopes) < maxSharedScopes {
		s.scopes[string(key)] = m
	}
	return m
}
