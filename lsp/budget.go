package lsp

import "sync"

// recordOwner is the agent of one store file whose records a cache entry
// holds: the candidate, store-data, view and lint-facts caches share an
// agent's candidates, so what they hold together is counted per agent.
type recordOwner struct {
	path  string // the store file
	agent string
}

// recordBudget bounds the records the server's caches hold together.
// Each cache bounds itself, but they did so apart: with a big store (100k
// candidates per agent) the lint facts kept the agent linted last and the
// views the agent hovered last, two agents' records, analyses and views
// (issue 35). Every cache claims the agent of an entry it keeps or uses;
// when the agents claimed hold more than maxCachedRecords records, the
// agents used least recently are dropped from every cache, the agent
// claimed last always kept. The zero value is ready to use; a nil budget
// bounds nothing.
type recordBudget struct {
	mu     sync.Mutex
	tick   uint64
	agents map[recordOwner]budgetUse
	drops  []func(gone map[recordOwner]bool) // each cache's eviction
	// sizes are the most records of each agent claimed so far (kept after
	// they are dropped: a view that keeps 100 lines of an agent of 100k
	// candidates does not make it small), and biggest the most of one
	// agent of each store file: what reserve and turns expect an agent's
	// read to bring.
	sizes   map[recordOwner]int
	biggest map[string]int
}

// maxBudgetSizes bounds the sizes the budget remembers.
const maxBudgetSizes = 4096

type budgetUse struct {
	records int
	used    uint64
}

// register adds a cache's eviction: drop is called, outside the budget's
// lock, with the agents whose entries the cache must drop.
func (b *recordBudget) register(drop func(gone map[recordOwner]bool)) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.drops = append(b.drops, drop)
}

// claim notes that a cache keeps (or used) records records of o, and drops
// the agents used least recently from every cache while the agents claimed
// hold more than maxCachedRecords records. The caller holds no cache lock.
func (b *recordBudget) claim(o recordOwner, records int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	if b.agents == nil {
		b.agents = map[recordOwner]budgetUse{}
	}
	b.tick++
	if u, ok := b.agents[o]; ok && u.records > records {
		records = u.records // the biggest entry of o any cache keeps
	}
	b.agents[o] = budgetUse{records: records, used: b.tick}
	b.sizeLocked(o, records)
	b.evict(o, 0, true)
}

// sized notes that a read of o brought records records, kept by no cache (a
// store written within engine.RacyWindow): the turns still learn its size.
func (b *recordBudget) sized(o recordOwner, records int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sizeLocked(o, records)
}

func (b *recordBudget) sizeLocked(o recordOwner, records int) {
	if b.sizes == nil || len(b.sizes) >= maxBudgetSizes {
		b.sizes, b.biggest = map[recordOwner]int{}, map[string]int{}
	}
	b.sizes[o] = max(b.sizes[o], records)
	b.biggest[o.path] = max(b.biggest[o.path], records)
}

// reserve makes room before o's records are read from the store: the
// agents used least recently are dropped while the others' records and
// those o is expected to bring (as many as last time, else as many as the
// biggest agent of its store) exceed maxCachedRecords. Reading a big agent
// while the caches still held another was the server's peak memory.
func (b *recordBudget) reserve(o recordOwner) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.evict(o, b.expectedLocked(o), false) // what o held is read again
}

// size is the most records of o's agent claimed so far; known is false
// when none were.
func (b *recordBudget) size(o recordOwner) (records int, known bool) {
	if b == nil {
		return 0, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	records, known = b.sizes[o]
	return records, known
}

// expectedLocked is what o's read is expected to bring: its size, else the
// most of one agent of its store file. b.mu is held.
func (b *recordBudget) expectedLocked(o recordOwner) int {
	if n, ok := b.sizes[o]; ok {
		return n
	}
	return b.biggest[o.path]
}

// evict drops, least recently used first, the agents other than o while the
// agents' records (o's counted when withO) and extra exceed
// maxCachedRecords. It is called with b.mu held and releases it.
func (b *recordBudget) evict(o recordOwner, extra int, withO bool) {
	total := extra
	for k, u := range b.agents {
		if k != o || withO {
			total += u.records
		}
	}
	var gone map[recordOwner]bool
	for total > maxCachedRecords {
		var old recordOwner
		found := false
		for k, u := range b.agents {
			if k != o && (!found || u.used < b.agents[old].used) {
				old, found = k, true
			}
		}
		if !found {
			break
		}
		if gone == nil {
			gone = map[recordOwner]bool{}
		}
		gone[old] = true
		total -= b.agents[old].records
		delete(b.agents, old)
	}
	drops := b.drops
	b.mu.Unlock()
	if gone == nil {
		return
	}
	for _, drop := range drops {
		drop(gone)
	}
}
