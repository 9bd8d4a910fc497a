package schema

import "fmt"

// RuleCeilingExceeded is the lint rule of the composition-wide ceiling. It
// is a hard failure (ADR-0008 Decision 6): always an error, never
// suppressed; only the limit (`ceiling:`) is configurable.
const RuleCeilingExceeded = "ceiling-exceeded"

// HardRule reports whether a lint rule cannot be turned off, downgraded or
// suppressed.
func HardRule(id string) bool { return id == RuleCeilingExceeded }

// hardRuleMessage is the config error of a setting that tries.
func hardRuleMessage(id, how string) string {
	return fmt.Sprintf("%s is a hard failure and cannot be %s; raise or lower the limit with `ceiling:` instead", id, how)
}

// HardRuleProblems returns an error for every suppression comment of d that
// names a hard rule, at the comment's line.
func HardRuleProblems(d *Document) []Problem {
	if d == nil {
		return nil
	}
	var ps []Problem
	for _, s := range d.Suppressions() {
		if HardRule(s.Rule) {
			r := d.LineRange(s.Line)
			ps = append(ps, Problem{Rule: s.Rule, Severity: SeverityError, Range: r, Message: hardRuleMessage(s.Rule, "suppressed")})
		}
	}
	return ps
}

// LineRange returns the range of line l (0-based) without its line break.
// It reads the line tables only (never the parse's cursors): a document
// is read from several goroutines.
func (d *Document) LineRange(l int) Range {
	if l < 0 || l >= d.lines.lines() {
		return d.rootRange()
	}
	return d.lines.lineRange(l)
}
