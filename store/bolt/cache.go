package bolt

import (
	"bytes"
	"sync"

	"github.com/agent-ls/agent-ls/store"
)

// decodeCacheBytes bounds the stored values a Store's decode cache keeps;
// past it the cache starts over.
const decodeCacheBytes = 8 << 20

// decodeCache remembers decoded records and promotion rows by key together
// with the exact bytes they were decoded from. A hit needs the stored value
// to be byte-equal to the remembered one, so it is correct whatever wrote
// the file in between (another process, another transaction): it only
// saves decoding values that did not change, which is what repeated
// reconciliation reads of the same targets do. Only Update transactions
// consult and fill it, so a store that never batches keeps it empty.
type decodeCache struct {
	mu      sync.Mutex
	size    int
	records map[string]cachedRecord
	proms   map[string]cachedPromotion
}

type cachedRecord struct {
	raw []byte
	st  store.Stored
}

type cachedPromotion struct {
	raw []byte
	p   store.Promotion
}

func newDecodeCache() *decodeCache {
	return &decodeCache{records: map[string]cachedRecord{}, proms: map[string]cachedPromotion{}}
}

func (c *decodeCache) grow(n int) {
	c.size += n
	if c.size > decodeCacheBytes {
		clear(c.records)
		clear(c.proms)
		c.size = n
	}
}

// record returns a copy of the record decoded from v under key.
func (c *decodeCache) record(key, v []byte) (store.Stored, bool) {
	c.mu.Lock()
	e, ok := c.records[string(key)]
	c.mu.Unlock()
	if ok && bytes.Equal(e.raw, v) {
		return store.Stored{Rec: store.CloneRecord(e.st.Rec), Seq: e.st.Seq}, true
	}
	st, ok := decodeRecord(key, v)
	if !ok {
		return st, false
	}
	e = cachedRecord{raw: bytes.Clone(v), st: store.Stored{Rec: store.CloneRecord(st.Rec), Seq: st.Seq}}
	c.mu.Lock()
	c.grow(len(v))
	c.records[string(key)] = e
	c.mu.Unlock()
	return st, true
}

// promotion returns a copy of the promotion row decoded from v under key.
func (c *decodeCache) promotion(key string, v []byte, decode func([]byte) (store.Promotion, error)) (store.Promotion, error) {
	c.mu.Lock()
	e, ok := c.proms[key]
	c.mu.Unlock()
	if ok && bytes.Equal(e.raw, v) {
		p := e.p
		p.Evidence = store.CloneEvidence(p.Evidence)
		return p, nil
	}
	p, err := decode(v)
	if err != nil {
		return p, err
	}
	e = cachedPromotion{raw: bytes.Clone(v), p: p}
	e.p.Evidence = store.CloneEvidence(p.Evidence)
	c.mu.Lock()
	c.grow(len(v))
	c.proms[key] = e
	c.mu.Unlock()
	return p, nil
}
