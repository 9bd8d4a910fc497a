package overlay

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

// TestRenderAllocatesEachLineOnce: rendering an agent of 1,400 background
// facts and 600 heuristics (bench/gen's shape) allocates each line's text
// and fragment once: the fragments of the big sections are not grown one
// doubling at a time (twice what they hold) and no pointer string is built
// to look a line up. Not parallel: it counts the process's allocations.
func TestRenderAllocatesEachLineOnce(t *testing.T) {
	cfg := base(t)
	for i := range 1400 {
		cfg.Background.ProjectContext = append(cfg.Background.ProjectContext, schema.Entry{Key: fmt.Sprintf("fact_%04d", i), Value: fmt.Sprintf("authored value %d", i)})
	}
	j := &cfg.RoleTemplate.Judgments[0]
	for i := range 600 {
		j.Heuristics = append(j.Heuristics, fmt.Sprintf("Authored heuristic number %d keeps the service healthy", i))
	}
	var p Prompt
	least := ^uint64(0)
	for range 3 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		p = Render(cfg, Attribution{})
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	lines := 0
	for _, s := range p.Sections {
		lines += len(s.Fragments)
	}
	if lines < 2000 {
		t.Fatalf("rendered %d lines, want at least 2,000", lines)
	}
	// A fragment is 56 bytes and its text about 50 here: about 115 bytes
	// a line (175 under -race); growing the fragments and building
	// pointers made it 270.
	per := least / uint64(lines)
	if per > 190 {
		t.Errorf("Render allocated %d bytes a line, want at most 190", per)
	}
	t.Logf("Render: %d bytes a line, %d lines", per, lines)
}
