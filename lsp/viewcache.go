package lsp

import (
	"context"
	"sync"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/lint/gather"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// maxCachedViews bounds the cache (closed files are not dropped one by one).
const maxCachedViews = 64

// maxLiveViews is how many compositions (and agents' store data) the view
// cache keeps: those of the files used last. A composition holds its
// agent's records, candidates and history (~4 MB for 5,000 candidates),
// so keeping one per open file made the server's memory grow with the
// files open (issue 35); a request on another file composes it again from
// the store (the lint facts cache keeps two agents the same way).
const maxLiveViews = 2

// maxCachedRecords bounds the records a cache (views, store data, lint
// facts, candidates) keeps besides those of its entry used last: with a big
// store (100k candidates per agent) two agents' records, views and lint
// analyses were most of the server's steady memory (issue 35), so such an
// agent's cache keeps it alone and a request on another file reads its
// store again. With 10k records per agent, two agents still fit.
const maxCachedRecords = 64000

// viewKey is everything a memoryView depends on apart from the clock: the
// parsed text (one *schema.Document per analysed version), the workspace
// (a reloaded .agent-ls.yaml is a new *workspaceInfo) and the store state.
type viewKey struct {
	doc   *schema.Document
	ws    *workspaceInfo
	stamp engine.StoreStamp
}

// cachedView is a composition with the time until which it holds: the
// first future expiry or invalidation among its records ("" = none).
type cachedView struct {
	key   viewKey
	until string
	view  *memoryView
	owner recordOwner // whose records the view holds (recordBudget)
	used  uint64      // viewCache.tick at the last get or put
}

// viewCache keeps the last composition of each agent file so that hover,
// inlay hints and code actions on an unchanged file and store do not
// compose again. The zero value is ready to use.
type viewCache struct {
	mu     sync.Mutex
	m      map[protocol.DocumentURI]cachedView
	stores map[storeKey]cachedStore
	tick   uint64 // counts gets and puts: the order of use
}

// get returns the cached view of uri for key when it still holds at now.
func (c *viewCache) get(uri protocol.DocumentURI, key viewKey, now string) *memoryView {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[uri]
	if !ok || e.key != key || e.until != "" && e.until <= now {
		return nil
	}
	c.tick++
	e.used = c.tick
	c.m[uri] = e
	return e.view
}

// put remembers v for uri, valid until the first time one of its records
// changes validity after now.
func (c *viewCache) put(uri protocol.DocumentURI, key viewKey, now string, v *memoryView, owner recordOwner) {
	var composed []schema.MemoryRecord
	if v.res != nil {
		composed = v.res.Records
	}
	until := store.NextChange(now, composed)
	for _, ml := range v.lines {
		until = store.NextChangeOf(now, until, ml.rec)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[uri]; c.m == nil || !ok && len(c.m) >= maxCachedViews {
		c.m = map[protocol.DocumentURI]cachedView{} // bounded: start over
	}
	c.tick++
	c.m[uri] = cachedView{key: key, until: until, view: v, owner: owner, used: c.tick}
	for len(c.m) > maxLiveViews || len(c.m) > 1 && viewLines(c.m) > maxCachedRecords {
		var old protocol.DocumentURI
		first := true
		for u, e := range c.m {
			if first || e.used < c.m[old].used {
				old, first = u, false
			}
		}
		delete(c.m, old)
	}
}

// drop forgets the views and store data of the agents gone (recordBudget).
func (c *viewCache) drop(gone map[recordOwner]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for u, e := range c.m {
		if gone[e.owner] {
			delete(c.m, u)
		}
	}
	for k := range c.stores {
		if gone[recordOwner{path: k.ws.StorePath, agent: k.agent}] {
			delete(c.stores, k)
		}
	}
}

// viewLines is how many memory lines the views of m hold.
func viewLines(m map[protocol.DocumentURI]cachedView) int {
	n := 0
	for _, e := range m {
		n += len(e.view.lines)
	}
	return n
}

// storeData is what a composition reads from the store for one agent of a
// workspace; it does not depend on the agent file's text, so an edit
// composes again from it without a store operation.
type storeData struct {
	promoted   []schema.MemoryRecord
	candidates []schema.MemoryRecord
	promotions map[string]*store.Promotion
	// histories are the promoted records' ledger histories, oldest first
	// (0: none), hist each promoted record's number in it (a candidate's
	// is read when shown: memoryView.historyOf).
	histories [][]historyEntry
	hist      []uint32
}

// storeKey is what storeData depends on: the workspace (its scope and
// store path), the agent and the store state.
type storeKey struct {
	ws    *workspaceInfo
	agent string
	stamp engine.StoreStamp
}

type cachedStore struct {
	until string
	data  *storeData
	used  uint64 // viewCache.tick at the last get or put
}

// getStore returns the cached store data for key when it still holds at now.
func (c *viewCache) getStore(key storeKey, now string) *storeData {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.stores[key]
	if !ok || e.until != "" && e.until <= now {
		return nil
	}
	c.tick++
	e.used = c.tick
	c.stores[key] = e
	return e.data
}

// putStore remembers d for key, valid until one of its records changes
// validity after now. Only the newest state of a workspace's agent is kept.
func (c *viewCache) putStore(key storeKey, now string, d *storeData) {
	until := store.NextChange(now, d.promoted, d.candidates)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stores == nil || len(c.stores) >= maxCachedViews {
		c.stores = map[storeKey]cachedStore{}
	}
	for k := range c.stores {
		if k.ws == key.ws && k.agent == key.agent {
			delete(c.stores, k)
		}
	}
	c.tick++
	c.stores[key] = cachedStore{until: until, data: d, used: c.tick}
	for len(c.stores) > maxLiveViews || len(c.stores) > 1 && storeRecords(c.stores) > maxCachedRecords {
		var old storeKey
		first := true
		for k, e := range c.stores {
			if first || e.used < c.stores[old].used {
				old, first = k, false
			}
		}
		delete(c.stores, old)
	}
}

// storeRecords is how many records the store data of m hold.
func storeRecords(m map[storeKey]cachedStore) int {
	n := 0
	for _, e := range m {
		n += len(e.data.promoted) + len(e.data.candidates)
	}
	return n
}

// candKey is what an agent's candidates depend on: the store file's state,
// the agent and the scope they were read in.
type candKey struct {
	path  string
	stamp engine.StoreStamp
	agent string
	scope string
}

type cachedCands struct {
	key            candKey
	until          string
	live, rejected []schema.MemoryRecord
}

// candidateCache keeps the candidates of the agents read last, shared by
// the lint facts and the views: an agent's candidates (tens of thousands
// with a big store) are decoded once for both, and both caches hold the
// same records (issue 35). It keeps maxLiveViews agents (one beyond
// maxCachedRecords), the least recently used dropped. The zero value is ready to use.
type candidateCache struct {
	mu      sync.Mutex
	entries []*cachedCands // most recently used last
}

// get returns the candidates of key still valid at now.
func (c *candidateCache) get(key candKey, now string) (*cachedCands, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.key != key {
			continue
		}
		c.entries = append(c.entries[:i], c.entries[i+1:]...)
		if e.until != "" && e.until <= now {
			return nil, false
		}
		c.entries = append(c.entries, e)
		return e, true
	}
	return nil, false
}

// put keeps e, replacing an older state of the same agent and scope.
func (c *candidateCache) put(e *cachedCands) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.entries[:0]
	for _, o := range c.entries {
		if o.key.path != e.key.path || o.key.agent != e.key.agent || o.key.scope != e.key.scope {
			kept = append(kept, o)
		}
	}
	clear(c.entries[len(kept):])
	c.entries = append(kept, e)
	total := 0
	for _, e := range c.entries {
		total += len(e.live)
	}
	for len(c.entries) > maxLiveViews || len(c.entries) > 1 && total > maxCachedRecords {
		total -= len(c.entries[0].live)
		c.entries[0] = nil
		c.entries = c.entries[1:]
	}
}

// drop forgets the candidates of the agents gone (recordBudget).
func (c *candidateCache) drop(gone map[recordOwner]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.entries[:0]
	for _, e := range c.entries {
		if !gone[recordOwner{path: e.key.path, agent: e.key.agent}] {
			kept = append(kept, e)
		}
	}
	clear(c.entries[len(kept):])
	c.entries = kept
}

// candidatesOf reads agents' candidates (gather.Candidates) from the store
// file at path through the server's candidate cache: from the cache while
// the file is unchanged (not written within engine.RacyWindow) and no candidate
// has expired, else from st, compacted (compactRecords) and cached. The
// records are shared: never modify them.
func (s *server) candidatesOf(path string) gather.CandidatesFunc {
	return func(ctx context.Context, st store.Reader, agent string, scope map[string]string) ([]schema.MemoryRecord, []schema.MemoryRecord, error) {
		start := s.opts.Now()
		now := schema.FormatTime(start)
		stamp, cacheable := engine.SettledStamp(path, start)
		key := candKey{path: path, stamp: stamp, agent: agent, scope: scopeKey(scope)}
		owner := recordOwner{path: path, agent: agent}
		cached := func() ([]schema.MemoryRecord, []schema.MemoryRecord, bool) {
			if !cacheable {
				return nil, nil, false
			}
			e, ok := s.cands.get(key, now)
			if !ok {
				return nil, nil, false
			}
			s.budget.claim(owner, len(e.live)+len(e.rejected))
			return e.live, e.rejected, true
		}
		if live, rejected, ok := cached(); ok {
			return live, rejected, nil
		}
		// One decode at a time, a lint pass's or a view's: two big agents
		// decoded at once were the server's peak memory at 1M records
		// (issue 35). The one ahead may have read these meanwhile.
		if err := s.readTurns.take(ctx); err != nil {
			return nil, nil, err
		}
		defer s.readTurns.done()
		if live, rejected, ok := cached(); ok {
			return live, rejected, nil
		}
		// Room first: the agents used least recently go before this one's
		// records are read (recordBudget.reserve).
		s.budget.reserve(owner)
		live, rejected, err := gather.Candidates(ctx, st, agent, scope)
		if err != nil {
			return nil, nil, err
		}
		live, rejected = clipped(live), clipped(rejected)
		compactRecords(live)
		if after, _, ok := engine.StampOf(path); cacheable && ok && after == stamp {
			s.cands.put(&cachedCands{key: key, until: store.NextChange(now, live, rejected), live: live, rejected: rejected})
			s.budget.claim(owner, len(live)+len(rejected))
		} else {
			s.budget.sized(owner, len(live)+len(rejected))
		}
		return live, rejected, nil
	}
}
