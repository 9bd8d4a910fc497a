package lsp

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/lint/gather"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// maxFactsEntries bounds the lint engine's cache of store facts: one entry
// per agent (and scope) of the files linted last, the least recently used
// dropped. Keystrokes go to one file (or alternate between two): with ten
// files open over a store of 100k records, an entry per file (the agent's
// records and their analyses, several MB each there) was most of the
// server's memory, while a file linted again after two others costs one
// store read. RSS harness: 16 entries ~180 MB, 4 ~134 MB, 2 ~104 MB.
const maxFactsEntries = 2

// factsCache keeps what the lint engine read from a store for an agent,
// with the analyses of their texts, while the store file is unchanged: a
// keystroke lints the new text against the same records without reading
// and analysing them again. An entry holds until the store file's stamp
// changes or the first of its records expires or is invalidated by time.
type factsCache struct {
	mu      sync.Mutex
	entries []*factsEntry   // most recently used last
	budgets []*recordBudget // the budgets it registered with
}

type factsKey struct {
	path  string
	stamp engine.StoreStamp
	agent string
	scope string
}

type factsEntry struct {
	key   factsKey
	facts lint.StoreFacts
	until string // the first future ExpiresAt/InvalidAt of its records; "" none

	// memo keeps the conflicts an edit cannot change (lint.Memo).
	memo lint.Memo

	mu    sync.Mutex
	texts map[string]*lint.Analysis
	words lint.Interner // the texts' words, shared
}

// analyze is the lint analysis (lexical) memoized in the entry (bounded by the texts
// its records and the agent file hold).
func (e *factsEntry) analyze(t string) *lint.Analysis {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.texts[t]; ok {
		return x
	}
	x := e.words.Analyze(t)
	if len(e.texts) < 4*(len(e.facts.Promoted)+len(e.facts.Candidates))+1024 {
		e.texts[t] = x
	}
	return x
}

func scopeKey(scope map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(scope)) {
		fmt.Fprintf(&b, "%q=%q;", k, scope[k])
	}
	return b.String()
}

// join registers c's eviction with b once.
func (c *factsCache) join(b *recordBudget) {
	if b == nil {
		return
	}
	c.mu.Lock()
	joined := slices.Contains(c.budgets, b)
	if !joined {
		c.budgets = append(c.budgets, b)
	}
	c.mu.Unlock()
	if !joined {
		b.register(c.drop)
	}
}

// drop forgets the entries of the agents gone (recordBudget).
func (c *factsCache) drop(gone map[recordOwner]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = slices.DeleteFunc(c.entries, func(e *factsEntry) bool {
		return gone[recordOwner{path: e.key.path, agent: e.key.agent}]
	})
}

// get returns the entry of key still valid at now, or nil.
func (c *factsCache) get(key factsKey, now string) *factsEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.key != key {
			continue
		}
		c.entries = slices.Delete(c.entries, i, i+1)
		if e.until != "" && e.until <= now {
			return nil
		}
		c.entries = append(c.entries, e)
		return e
	}
	return nil
}

// put stores e, replacing an entry of the same path and agent.
func (c *factsCache) put(e *factsEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = slices.DeleteFunc(c.entries, func(o *factsEntry) bool {
		return o.key.path == e.key.path && o.key.agent == e.key.agent && o.key.scope == e.key.scope
	})
	if len(c.entries) >= maxFactsEntries {
		c.entries = c.entries[1:]
	}
	c.entries = append(c.entries, e)
	// A big agent's entry (its records and their analyses) is kept alone
	// (maxCachedRecords).
	total := 0
	for _, o := range c.entries {
		total += len(o.facts.Promoted) + len(o.facts.Candidates)
	}
	for len(c.entries) > 1 && total > maxCachedRecords {
		total -= len(c.entries[0].facts.Promoted) + len(c.entries[0].facts.Candidates)
		c.entries = c.entries[1:]
	}
}

// facts returns the store facts of agent for a lint at now, from the cache
// when the store file at path is unchanged (not written within
// engine.RacyWindow), else read from st and cached. Pending proposals are
// filtered at now on every call, so one that expired since drops out.
// The returned analyze memoizes the lint analysis with the entry, and the
// memo the conflicts an edit of the agent file cannot change.
// st, when nil, is opened with open on a miss and closed after the read.
// cands, when set, reads the candidates (gather.FactsWith): they come
// compacted and shared, and are kept as they are.
func (c *factsCache) facts(ctx context.Context, st store.Reader, open func(context.Context) (store.Store, error), path, agent string, scope map[string]string, now time.Time, cands gather.CandidatesFunc, budget *recordBudget) (lint.StoreFacts, func(string) *lint.Analysis, *lint.Memo, error) {
	c.join(budget)
	owner := recordOwner{path: path, agent: agent}
	nowS := schema.FormatTime(now)
	stamp, cacheable := engine.SettledStamp(path, now)
	key := factsKey{path: path, stamp: stamp, agent: agent, scope: scopeKey(scope)}
	if cacheable {
		if e := c.get(key, nowS); e != nil {
			budget.claim(owner, len(e.facts.Promoted)+len(e.facts.Candidates))
			f := e.facts
			f.Now = nowS
			f.Proposals = nil
			for _, p := range e.facts.Proposals {
				if store.ProposalStateAt(p, nowS) == store.ProposalPending {
					f.Proposals = append(f.Proposals, p)
				}
			}
			return f, e.analyze, &e.memo, nil
		}
	}
	if st == nil {
		opened, err := open(ctx)
		if err != nil {
			return lint.StoreFacts{}, nil, nil, err
		}
		defer func() { _ = opened.Close() }()
		var f lint.StoreFacts
		err = opened.View(ctx, func(r store.Reader) error {
			var err error
			f, err = gather.FactsWith(ctx, r, agent, scope, now, cands)
			return err
		})
		return c.keep(f, err, key, cacheable, path, stamp, nowS, cands == nil, budget)
	}
	f, err := gather.FactsWith(ctx, st, agent, scope, now, cands)
	return c.keep(f, err, key, cacheable, path, stamp, nowS, cands == nil, budget)
}

// keep caches facts f read from the store as stamp (when the store file is
// still as stamped) and returns them with their lexical memo. ownCands:
// f's candidates are its own to compact (not shared).
func (c *factsCache) keep(f lint.StoreFacts, err error, key factsKey, cacheable bool, path string, stamp engine.StoreStamp, nowS string, ownCands bool, budget *recordBudget) (lint.StoreFacts, func(string) *lint.Analysis, *lint.Memo, error) {
	if err != nil {
		return f, nil, nil, err
	}
	// Lint reads no record's scope: the cached records keep none
	// (compactRecords).
	compactRecords(f.Promoted)
	if ownCands {
		compactRecords(f.Candidates)
	}
	e := &factsEntry{key: key, facts: f, until: store.NextChange(nowS, f.Promoted, f.Candidates), texts: map[string]*lint.Analysis{}}
	if after, _, ok := engine.StampOf(path); cacheable && ok && after == stamp {
		c.put(e)
		budget.claim(recordOwner{path: key.path, agent: key.agent}, len(f.Promoted)+len(f.Candidates))
	}
	return f, e.analyze, &e.memo, nil
}
