package lsp

import (
	"fmt"
	"testing"
)

// TestFactsCacheBound: the lint engine's facts cache keeps the agents
// linted last, at most maxFactsEntries of them (each holds an agent's
// records and their analyses), the least recently used dropped first.
func TestFactsCacheBound(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, maxFactsEntries, maxFactsEntries + 1, 10} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			c := &factsCache{}
			for i := 0; i < n; i++ {
				c.put(&factsEntry{key: factsKey{path: "/ws/.agent-memory/memory.db", agent: fmt.Sprintf("agent-%d", i)}})
			}
			want := min(n, maxFactsEntries)
			if len(c.entries) != want {
				t.Fatalf("%d agents linted: the cache holds %d entries, want %d", n, len(c.entries), want)
			}
			for i, e := range c.entries {
				if got, exp := e.key.agent, fmt.Sprintf("agent-%d", n-want+i); got != exp {
					t.Errorf("entry %d is %s, want %s (the last linted kept)", i, got, exp)
				}
			}
		})
	}
}
