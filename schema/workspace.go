package schema

import (
	"fmt"
	"time"
)

// WorkspaceConfigName is the workspace config file, found by walking up from
// an agent file (like .git).
const WorkspaceConfigName = ".agent-ls.yaml"

// DefaultStorePath is where the store lives, relative to the workspace root.
const DefaultStorePath = ".agent-memory/memory.db"

// WorkspaceConfig is .agent-ls.yaml. Every key is optional; Defaults fills
// the documented defaults.
type WorkspaceConfig struct {
	// Schema is the optional "$schema" URI editors use.
	Schema string `json:"$schema,omitempty"`
	// Store is the database path, relative to the config file.
	Store string `json:"store,omitempty"`
	// Scope is the base scope; the agent key comes from roleTemplate.name.
	Scope map[string]string `json:"scope,omitempty"`
	// Actor is who code actions and CLI approvals act as (default human:$USER).
	Actor string `json:"actor,omitempty"`
	// Budgets are characters of memory-derived text per primitive.
	Budgets Budgets `json:"budgets,omitempty"`
	// Ceiling is the composition-wide limit in characters: the whole composed
	// prompt, authored and learned, counts against it (a hard lint failure).
	Ceiling   int             `json:"ceiling,omitempty"`
	Promotion PromotionConfig `json:"promotion,omitempty"`
	Eval      *EvalConfig     `json:"eval,omitempty"`
	Lint      LintConfig      `json:"lint,omitempty"`
	// Recall is the recall block's character budget (default 4000).
	Recall int `json:"recall,omitempty"`
	// StaleAfter is when a currentState fact counts as stale (default 30d).
	StaleAfter string `json:"staleAfter,omitempty"`
	// Limits bound what one memory may carry (DefaultLimits).
	Limits Limits `json:"limits,omitempty"`
	// StorePoll is how often followers of a database store (the language
	// server, memory events --follow, the lens) also read its change
	// counter besides LISTEN: a duration of at least 100ms (default 1s),
	// or "off" for notifications only.
	StorePoll string `json:"storePoll,omitempty"`
}

// MinStorePoll is the shortest StorePoll accepted.
const MinStorePoll = 100 * time.Millisecond

// ParseStorePoll parses a StorePoll value: "" is 0 (the default), "off"
// is -1 (notifications only), else a duration of at least MinStorePoll.
func ParseStorePoll(v string) (time.Duration, error) {
	switch v {
	case "":
		return 0, nil
	case "off":
		return -1, nil
	}
	d, err := ParseDuration(v)
	if err != nil {
		return 0, &ValueError{Name: "storePoll", Value: v, Why: "want a duration such as 1s or 500ms, or off"}
	}
	if d < MinStorePoll {
		return 0, &ValueError{Name: "storePoll", Value: v, Why: fmt.Sprintf("at least %s, or off", MinStorePoll)}
	}
	return d, nil
}

// Budgets are per-primitive character budgets for memory-derived text.
type Budgets struct {
	Background int `json:"background,omitempty"`
	Judgment   int `json:"judgment,omitempty"`
	Example    int `json:"example,omitempty"`
	Awareness  int `json:"awareness,omitempty"`
	Recovery   int `json:"recovery,omitempty"`
	Manual     int `json:"manual,omitempty"`
}

// Sum adds the budgets.
func (b Budgets) Sum() int {
	return b.Background + b.Judgment + b.Example + b.Awareness + b.Recovery + b.Manual
}

// For returns the budget of a primitive.
func (b Budgets) For(p Primitive) int {
	switch p {
	case PrimitiveBackground:
		return b.Background
	case PrimitiveJudgment:
		return b.Judgment
	case PrimitiveExample:
		return b.Example
	case PrimitiveAwareness:
		return b.Awareness
	case PrimitiveRecovery:
		return b.Recovery
	case PrimitiveManual:
		return b.Manual
	}
	return 0
}

// PromotionConfig tunes the earned and guarded tiers.
type PromotionConfig struct {
	// Recurrence is N: distinct conversations that earn a promotion (default 2).
	Recurrence int `json:"recurrence,omitempty"`
	// CandidateSlice is K: candidates reserved in the recall block (default 3).
	CandidateSlice int `json:"candidateSlice,omitempty"`
	// ProposalExpiry is how long a proposal waits for a human (default 72h).
	ProposalExpiry string `json:"proposalExpiry,omitempty"`
}

// EvalConfig configures the command evaluator of the eval gate.
type EvalConfig struct {
	Command []string `json:"command"`
	Timeout string   `json:"timeout,omitempty"`
	// Require is "non-regression" (default) or "improvement".
	Require string `json:"require,omitempty"`
}

// LintConfig configures lint rules: off, error, warning, info or hint.
type LintConfig struct {
	Rules map[string]string `json:"rules,omitempty"`
}

// Documented defaults.
var (
	DefaultBudgets = Budgets{Background: 2000, Judgment: 1500, Example: 1500, Awareness: 800, Recovery: 400, Manual: 800}
)

// Default values of scalar settings.
const (
	DefaultCeiling        = 32000
	DefaultRecurrence     = 2
	DefaultCandidateSlice = 3
	DefaultProposalExpiry = 72 * time.Hour
	DefaultRecallBudget   = 4000
	DefaultStaleAfter     = 30 * 24 * time.Hour
	DefaultEvalTimeout    = 5 * time.Minute
)

// WithDefaults returns c with every unset key at its documented default.
// Budgets default per primitive; Actor stays empty (the host fills in
// human:$USER).
func (c WorkspaceConfig) WithDefaults() WorkspaceConfig {
	if c.Store == "" {
		c.Store = DefaultStorePath
	}
	d := DefaultBudgets
	b := &c.Budgets
	for _, f := range []struct {
		v   *int
		def int
	}{{&b.Background, d.Background}, {&b.Judgment, d.Judgment}, {&b.Example, d.Example}, {&b.Awareness, d.Awareness}, {&b.Recovery, d.Recovery}, {&b.Manual, d.Manual}} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if c.Ceiling == 0 {
		c.Ceiling = DefaultCeiling
	}
	if c.Promotion.Recurrence == 0 {
		c.Promotion.Recurrence = DefaultRecurrence
	}
	if c.Promotion.CandidateSlice == 0 {
		c.Promotion.CandidateSlice = DefaultCandidateSlice
	}
	if c.Promotion.ProposalExpiry == "" {
		c.Promotion.ProposalExpiry = DefaultProposalExpiry.String()
	}
	if c.Recall == 0 {
		c.Recall = DefaultRecallBudget
	}
	if c.StaleAfter == "" {
		c.StaleAfter = "30d"
	}
	c.Limits = c.Limits.WithDefaults()
	if c.Eval != nil && c.Eval.Require == "" {
		c.Eval.Require = "non-regression"
	}
	return c
}
