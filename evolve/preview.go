package evolve

import (
	"context"
	"fmt"
	"strings"

	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Preview returns the composition diff a proposal would make once approved:
// a unified diff of the rendered system prompt before and after ("this line
// would leave your agent"). Without an authored config it is a one-line
// before/after of the affected slot.
func (e *Engine) Preview(ctx context.Context, p store.Proposal) (string, error) {
	rec, err := e.st.Get(ctx, p.RecordID)
	if err != nil {
		return "", fmt.Errorf("record %s: %w", p.RecordID, err)
	}
	promote := p.Kind == store.ProposePromote
	if e.agent == nil {
		target := "(untargeted)"
		if rec.Target != nil {
			target = rec.Target.String()
		}
		sign := "-"
		if promote {
			sign = "+"
		}
		return fmt.Sprintf("%s %s: %s\n", sign, target, rec.Content), nil
	}
	prom, err := e.promoted(ctx)
	if err != nil {
		return "", err
	}
	var others []schema.MemoryRecord
	for _, r := range prom {
		if r.ID != rec.ID && (p.MergedContent == "" || r.ID != p.SupersededBy) {
			others = append(others, r)
		}
	}
	if p.MergedContent != "" {
		// A merge: both fragments leave, one entry with the merged text
		// takes the keeper's place.
		for _, r := range prom {
			if r.ID == p.SupersededBy {
				r.Content = p.MergedContent
				others = append(others, r)
			}
		}
	}
	with := append(append([]schema.MemoryRecord{}, others...), rec)
	before, after := prom, others
	if promote {
		before, after = others, with
	}
	return e.renderDiff(before, after, "current", "after "+string(p.Kind)+" "+p.ID), nil
}

// renderDiff renders the composition of two record sets and diffs them.
func (e *Engine) renderDiff(before, after []schema.MemoryRecord, fromName, toName string) string {
	cb, rb := overlay.Apply(e.agent, before, e.policy)
	ca, ra := overlay.Apply(e.agent, after, e.policy)
	return UnifiedDiff(overlay.Render(cb, rb.Attribution).Text(), overlay.Render(ca, ra.Attribution).Text(), fromName, toName)
}

// UnifiedDiff is a line diff of a and b in unified format with two lines
// of context; "" when they are equal. The lines a and b share at their
// start and end are matched as they are; the lines between are aligned by
// their longest common subsequence, or, past maxDiffCells, replaced as a
// whole (a correct diff, not a minimal one).
func UnifiedDiff(a, b, fromName, toName string) string {
	if a == b {
		return ""
	}
	ops := diffOps(splitLines(a), splitLines(b))
	const ctx = 2
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", fromName, toName)
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		start := max(0, k-ctx)
		end := k
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			// Extend over a short run of context that precedes another change.
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run < len(ops) && run-end <= 2*ctx {
				end = run
				continue
			}
			end = min(len(ops), end+ctx)
			break
		}
		aStart, bStart, aLen, bLen := ops[start].ai, ops[start].bi, 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				aLen++
			}
			if o.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", aStart+1, aLen, bStart+1, bLen)
		for _, o := range ops[start:end] {
			out.WriteByte(o.kind)
			out.WriteString(o.text)
			out.WriteByte('\n')
		}
		k = end
	}
	return out.String()
}

// maxDiffCells bounds the LCS table of UnifiedDiff's changed middle (4M
// cells, 16 MB); a bigger middle is diffed as one replacement.
const maxDiffCells = 1 << 22

// diffOp is one line of a diff: kept (' '), removed ('-') or added ('+'),
// with its index in a (for ' ' and '-') and in b (for ' ' and '+').
type diffOp struct {
	kind   byte
	text   string
	ai, bi int
}

// diffOps aligns x and y: their common first and last lines kept, the
// middle by LCS (removals before additions where both are as long).
func diffOps(x, y []string) []diffOp {
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	ops := make([]diffOp, 0, len(x)+len(y)-pre-suf)
	for i := range pre {
		ops = append(ops, diffOp{' ', x[i], i, i})
	}
	mx, my := x[pre:len(x)-suf], y[pre:len(y)-suf]
	n, m := len(mx), len(my)
	if (n+1)*(m+1) > maxDiffCells {
		for i := range n {
			ops = append(ops, diffOp{'-', mx[i], pre + i, pre})
		}
		for j := range m {
			ops = append(ops, diffOp{'+', my[j], pre + n, pre + j})
		}
	} else {
		// lcs[i*(m+1)+j] is the LCS length of mx[i:], my[j:].
		w := m + 1
		lcs := make([]int32, (n+1)*w)
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if mx[i] == my[j] {
					lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
				} else {
					lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && mx[i] == my[j]:
				ops = append(ops, diffOp{' ', mx[i], pre + i, pre + j})
				i++
				j++
			case i < n && (j == m || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
				ops = append(ops, diffOp{'-', mx[i], pre + i, pre + j})
				i++
			default:
				ops = append(ops, diffOp{'+', my[j], pre + i, pre + j})
				j++
			}
		}
	}
	for k := range suf {
		i, j := len(x)-suf+k, len(y)-suf+k
		ops = append(ops, diffOp{' ', x[i], i, j})
	}
	return ops
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
