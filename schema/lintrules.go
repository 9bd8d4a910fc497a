package schema

import (
	"fmt"
	"slices"
)

// The lint rule ids, stable: package lint implements and documents each
// one; the workspace config (lint.rules) and suppression comments name
// them. They are stated here, once, so that a config naming no rule is an
// error at its key (LoadWorkspace) without the pure schema core importing
// lint; lint's test checks that its rule table is exactly this list.
const (
	RuleBudgetSpill       = "budget-spill"
	RuleAuthoredWins      = "authored-wins"
	RuleMemoryConflict    = "memory-conflict"
	RuleUnknownDomain     = "unknown-domain"
	RuleMissingPayload    = "missing-payload"
	RuleContradiction     = "contradiction"
	RulePendingReview     = "pending-review"
	RuleStaleState        = "stale-state"
	RuleNearDuplicate     = "near-duplicate"
	RuleOrphanRecords     = "orphan-records"
	RuleStructuredContent = "structured-content"
	RuleCandidateProgress = "candidate-progress"
)

// LintRuleIDs returns every lint rule id, in lint --list-rules order.
func LintRuleIDs() []string {
	return []string{RuleSchema, RuleCeilingExceeded, RuleBudgetSpill, RuleAuthoredWins, RuleMemoryConflict,
		RuleUnknownDomain, RuleMissingPayload, RuleContradiction, RulePendingReview, RuleStaleState,
		RuleNearDuplicate, RuleOrphanRecords, RuleStructuredContent, RuleCandidateProgress}
}

// KnownLintRule reports whether id names a lint rule.
func KnownLintRule(id string) bool { return slices.Contains(LintRuleIDs(), id) }

// UnknownRuleSuppressions returns a warning for every suppression comment
// of d that names no lint rule (it suppresses nothing), at the comment's
// line, with the rule it most likely meant.
func UnknownRuleSuppressions(d *Document) []Problem {
	if d == nil {
		return nil
	}
	var ps []Problem
	for _, s := range d.Suppressions() {
		if KnownLintRule(s.Rule) {
			continue
		}
		msg := "the suppression names no lint rule: " + quoteKey(s.Rule)
		if best, ok := nearestRule(s.Rule); ok {
			msg += fmt.Sprintf(" (did you mean %q?)", best)
		}
		ps = append(ps, Problem{Rule: RuleSchema, Severity: SeverityWarning, Range: d.LineRange(s.Line), Message: msg})
	}
	return ps
}
