// Package contradiction is the one rule for when a judgment lesson
// contradicts its domain: which lines it is checked against (the authored
// and promoted heuristics and constraints of its judgment domain) and the
// test itself (lexical.TextContradicts). The save gate (evolve) and the
// lint rule `contradiction` both ask it. It does no I/O.
package contradiction

import (
	"strconv"

	"github.com/agent-ls/agent-ls/evolve/lexical"
	"github.com/agent-ls/agent-ls/schema"
)

// Slots are the judgment slots whose lines a lesson is checked against.
var Slots = [...]string{schema.SlotHeuristics, schema.SlotConstraints}

// Applies reports whether a lesson at t is checked at all: judgment targets
// only.
func Applies(t *schema.MemoryTarget) bool {
	return t != nil && t.Primitive == schema.PrimitiveJudgment
}

// Opposes reports whether p, a promoted record, is one the lesson id at t
// is checked against: another record whose target is a heuristic or a
// constraint of t's domain.
func Opposes(t *schema.MemoryTarget, id string, p *schema.MemoryRecord) bool {
	if !Applies(t) || !Applies(p.Target) || p.ID == id || p.Target.Domain != t.Domain {
		return false
	}
	return p.Target.Slot == Slots[0] || p.Target.Slot == Slots[1]
}

// AuthoredLine is an authored line a lesson is checked against.
type AuthoredLine struct {
	Pointer string // JSON pointer of the line in the agent file
	Slot    string // schema.SlotHeuristics or schema.SlotConstraints
	Text    string
}

// Authored returns the authored heuristics and constraints of t's domain
// in cfg, in file order; none when the lesson is not checked or cfg has no
// such domain.
func Authored(cfg *schema.AgentConfig, t *schema.MemoryTarget) []AuthoredLine {
	if cfg == nil || !Applies(t) {
		return nil
	}
	j := cfg.JudgmentByDomain(t.Domain)
	if j < 0 {
		return nil
	}
	jd := cfg.RoleTemplate.Judgments[j]
	prefix := "/roleTemplate/judgments/" + strconv.Itoa(j) + "/"
	out := make([]AuthoredLine, 0, len(jd.Heuristics)+len(jd.Constraints))
	for _, s := range []struct {
		slot  string
		lines []string
	}{{Slots[0], jd.Heuristics}, {Slots[1], jd.Constraints}} {
		for i, l := range s.lines {
			out = append(out, AuthoredLine{Pointer: prefix + s.slot + "/" + strconv.Itoa(i), Slot: s.slot, Text: l})
		}
	}
	return out
}

// Contradicts reports whether lesson contradicts line, both analysed with
// lexical.Analyze, and why.
func Contradicts(lesson, line *lexical.Text) (bool, string) {
	return lexical.TextContradicts(lesson, line)
}
