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

// UnifiedDiff is a small LCS line diff of a and b in unified format with
// two lines of context; "" when they are equal.
func UnifiedDiff(a, b, fromName, toName string) string {
	if a == b {
		return ""
	}
	x, y := splitLines(a), splitLines(b)
	n, m := len(x), len(y)
	// lcs[i][j] is the LCS length of x[i:], y[j:].
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte // ' ', '-', '+'
		text string
		ai   int // line index in a (for ' ' and '-')
		bi   int // line index in b (for ' ' and '+')
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ops = append(ops, op{' ', x[i], i, j})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', x[i], i, j})
			i++
		default:
			ops = append(ops, op{'+', y[j], i, j})
			j++
		}
	}
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

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
