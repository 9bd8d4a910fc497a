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
}

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
	total := 0
	for _, u := range b.agents {
		total += u.records
	}
	var gone map[recordOwner]bool
	for total > maxCachedRecords && len(b.agents) > 1 {
		var old recordOwner
		first := true
		for k, u := range b.agents {
			if k != o && (first || u.used < b.agents[old].used) {
				old, first = k, false
			}
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
