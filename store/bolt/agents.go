package bolt

import (
	"bytes"
	"context"
	"errors"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/store"
)

// Agents implements store.AgentLister with one pass over the records in
// key order: each record's id and scope are read in place (peekScope),
// and a record is decoded whole (to check it decodes and has not expired,
// as Search does) only while its agent is not listed yet, so a store of
// many records of a few agents is listed without decoding it.
func (s *Store) Agents(ctx context.Context, base map[string]string) ([]string, error) {
	seen := map[string]bool{}
	var names []string
	q := store.Query{Scope: base, IncludeInvalidated: true}
	now := s.nowString()
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		if b == nil {
			return nil
		}
		pg := newPager(tx)
		c := b.Cursor()
		n := 0
		for k, v := c.First(); k != nil; k, v = c.Next() {
			pg.step()
			if n++; n%ctxCheckEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if agent, in, ok := peekScope(k, v, base); ok && (!in || seen[string(agent)]) {
				continue
			}
			st, ok := decodeRecord(k, v)
			if !ok || !store.Match(&st.Rec, q, now) {
				continue
			}
			if agent := st.Rec.Scope[store.AgentKey]; !seen[agent] {
				seen[agent] = true
				names = append(names, agent)
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errNoFile) {
		return nil, err
	}
	return names, nil
}

// peekScope reads a records value's id and scope where json.Marshal puts
// them, first: `{"id":"…","scope":{…}`, all strings without escapes, and
// reports the scope's agent key ("" for none) and whether the scope holds
// every pair of base. ok is false for any other shape (the caller then
// decodes the record). agent points into v.
func peekScope(key, v []byte, base map[string]string) (agent []byte, in, ok bool) {
	if len(v) < 8 {
		return nil, false, false
	}
	d := recordDecoder{data: v[8:]}
	if !d.next('{') {
		return nil, false, false
	}
	if k, ok := d.raw(); !ok || string(k) != "id" || !d.next(':') {
		return nil, false, false
	}
	if id, ok := d.raw(); !ok || !bytes.Equal(id, key) || !d.next(',') {
		return nil, false, false
	}
	if k, ok := d.raw(); !ok || string(k) != "scope" || !d.next(':') || !d.next('{') {
		return nil, false, false
	}
	var keys [][]byte // the keys read, to refuse a repeated one
	matched := 0
	if !d.next('}') {
		for {
			k, ok := d.raw()
			if !ok || !d.next(':') {
				return nil, false, false
			}
			val, ok := d.raw()
			if !ok {
				return nil, false, false
			}
			for _, seenKey := range keys {
				if bytes.Equal(seenKey, k) {
					return nil, false, false
				}
			}
			keys = append(keys, k)
			if string(k) == store.AgentKey {
				agent = val
			}
			if want, ok := base[string(k)]; ok && want == string(val) {
				matched++
			}
			if d.next('}') {
				break
			}
			if !d.next(',') {
				return nil, false, false
			}
		}
	}
	return agent, matched == len(base), true
}
