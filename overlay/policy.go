package overlay

import "github.com/agent-ls/agent-ls/schema"

// Policy holds the growth-governance knobs Apply and Recall enforce. A zero
// budget, ceiling or recall budget means "no limit"; PolicyFrom always fills
// the documented defaults, so only hand-built policies are unlimited.
type Policy struct {
	// Budgets are characters (runes) of memory-derived text per primitive.
	Budgets schema.Budgets `json:"budgets"`
	// Ceiling is the composition-wide limit on the whole composed prompt's
	// characters, authored and learned; exceeding it is reported
	// (Report.Totals.CeilingExceeded), not enforced.
	Ceiling int `json:"ceiling"`
	// RecallBudget is the recall block's character budget.
	RecallBudget int `json:"recallBudget"`
	// CandidateSlice is K: targeted candidates reserved in the recall block.
	CandidateSlice int `json:"candidateSlice"`
}

// PolicyFrom returns the policy of a workspace config, defaults filled in.
func PolicyFrom(c schema.WorkspaceConfig) Policy {
	c = c.WithDefaults()
	return Policy{
		Budgets:        c.Budgets,
		Ceiling:        c.Ceiling,
		RecallBudget:   c.Recall,
		CandidateSlice: c.Promotion.CandidateSlice,
	}
}

// DefaultPolicy is PolicyFrom of an empty workspace config.
func DefaultPolicy() Policy { return PolicyFrom(schema.WorkspaceConfig{}) }
