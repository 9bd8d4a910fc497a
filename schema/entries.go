package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Entry is one key/value fact of a background section. Value is a decoded
// JSON value: string, float64, bool, nil, []any or map[string]any.
type Entry struct {
	Key   string
	Value any
}

// Entries is an ordered map: background sections keep their authored order.
// It encodes as a JSON object.
type Entries []Entry

// Get returns the value stored under key.
func (e Entries) Get(key string) (any, bool) {
	for _, en := range e {
		if en.Key == key {
			return en.Value, true
		}
	}
	return nil, false
}

// Has reports whether key is present.
func (e Entries) Has(key string) bool { _, ok := e.Get(key); return ok }

// MarshalJSON encodes the entries as a JSON object in their order.
func (e Entries) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, en := range e {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := json.Marshal(en.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(en.Value)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", en.Key, err)
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON decodes a JSON object keeping its key order. A duplicate key
// keeps its first position and its last value, as JSON decoders do.
func (e *Entries) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		*e = nil
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("background section: want an object, got %v", tok)
	}
	out := Entries{}
	idx := map[string]int{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := kt.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("background key %q: %w", key, err)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("background key %q: %w", key, err)
		}
		if i, ok := idx[key]; ok {
			out[i].Value = v
			continue
		}
		idx[key] = len(out)
		out = append(out, Entry{Key: key, Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	*e = out
	return nil
}
