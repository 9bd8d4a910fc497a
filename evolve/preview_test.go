package evolve

import (
	"fmt"
	"math/rand"
	"runtime"
	"strings"
	"testing"
)

// applyOps rebuilds both sides of a diff from its ops, checking that each
// op's indexes are where it stands.
func applyOps(t *testing.T, ops []diffOp) (a, b []string) {
	t.Helper()
	for _, o := range ops {
		if o.ai != len(a) || o.bi != len(b) {
			t.Fatalf("op %q %q at (%d, %d), want (%d, %d)", o.kind, o.text, o.ai, o.bi, len(a), len(b))
		}
		if o.kind != '+' {
			a = append(a, o.text)
		}
		if o.kind != '-' {
			b = append(b, o.text)
		}
	}
	return a, b
}

// lcsLen is the length of the longest common subsequence of x and y.
func lcsLen(x, y []string) int {
	prev, cur := make([]int, len(y)+1), make([]int, len(y)+1)
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				cur[j] = prev[j+1] + 1
			} else {
				cur[j] = max(prev[j], cur[j+1])
			}
		}
		prev, cur = cur, prev
	}
	return prev[0]
}

// TestDiffOpsMinimal: on random line lists (few distinct lines, so many
// ties and repeats), diffOps rebuilds both sides and keeps as many lines
// as their longest common subsequence: the shared ends it matches
// without a table never cost a line.
func TestDiffOpsMinimal(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(7))
	words := []string{"a", "b", "c", "d"}
	gen := func() []string {
		out := make([]string, rng.Intn(12))
		for i := range out {
			out[i] = words[rng.Intn(len(words))]
		}
		return out
	}
	for range 3000 {
		x, y := gen(), gen()
		if rng.Intn(3) == 0 { // shared ends
			end := gen()
			x, y = append(append(gen(), x...), end...), append(append([]string(nil), y...), end...)
		}
		ops := diffOps(x, y)
		a, b := applyOps(t, ops)
		if strings.Join(a, "\n") != strings.Join(x, "\n") || strings.Join(b, "\n") != strings.Join(y, "\n") {
			t.Fatalf("diffOps(%q, %q) rebuilds %q, %q", x, y, a, b)
		}
		kept := 0
		for _, o := range ops {
			if o.kind == ' ' {
				kept++
			}
		}
		if want := lcsLen(x, y); kept != want {
			t.Fatalf("diffOps(%q, %q) keeps %d lines, want %d (the LCS)", x, y, kept, want)
		}
	}
}

// TestUnifiedDiffOfALargePrompt: a proposal's diff of a prompt of 20,000
// lines that changes one line is the one-line hunk, computed without a
// table over the whole prompt (which took 3.2 GB); a middle past the
// table's bound is one replacement that still rebuilds both sides.
func TestUnifiedDiffOfALargePrompt(t *testing.T) {
	lines := make([]string, 20000)
	for i := range lines {
		lines[i] = fmt.Sprintf("- learned line %d", i)
	}
	a := strings.Join(lines, "\n") + "\n"
	lines[12345] = "- a changed line"
	b := strings.Join(lines, "\n") + "\n"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := UnifiedDiff(a, b, "A", "B")
	runtime.ReadMemStats(&after)
	want := "--- A\n+++ B\n@@ -12344,5 +12344,5 @@\n - learned line 12343\n - learned line 12344\n-- learned line 12345\n+- a changed line\n - learned line 12346\n - learned line 12347\n"
	if got != want {
		t.Errorf("UnifiedDiff =\n%s\nwant\n%s", got, want)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("UnifiedDiff of one changed line allocated %d MB", n>>20)
	}

	// Changes at both ends leave a middle of 20,000 lines on each side.
	x := strings.Split(strings.TrimSuffix(a, "\n"), "\n")
	y := append([]string{"first"}, x...)
	y = append(y, "last")
	y[5000] = "changed"
	ops := diffOps(x, y)
	ra, rb := applyOps(t, ops)
	if strings.Join(ra, "\n") != strings.Join(x, "\n") || strings.Join(rb, "\n") != strings.Join(y, "\n") {
		t.Fatal("a replaced middle does not rebuild both sides")
	}
}
