// Package lint is the composition rule engine shared by `agent-ls lint`, CI
// and the language server. A rule is a pure function over an authored agent
// document (with positions), its overlay report and store facts gathered by
// the caller; it returns findings at precise file ranges. The package does
// no I/O.
package lint

import (
	"cmp"
	"slices"
	"strings"

	"github.com/agent-ls/agent-ls/evolve/lexical"

	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// SeverityOff disables a rule in .agent-ls.yaml `lint.rules`.
const SeverityOff = "off"

// Input is everything the rules see. Only Doc is required.
type Input struct {
	// Doc is the parsed agent file; nil yields no findings.
	Doc *schema.Document
	// Config is the decoded agent; nil (the file has schema errors) runs the
	// schema rule only.
	Config *schema.AgentConfig
	// Report is the overlay report of Config with Facts.Promoted; nil lets
	// Run compute it with overlay.PolicyFrom(Settings).
	Report *overlay.Report
	// Facts are the store facts of this agent; zero when there is no store.
	Facts StoreFacts
	// Settings is the workspace config: budgets, ceiling, staleAfter,
	// promotion.recurrence and lint.rules overrides.
	Settings schema.WorkspaceConfig
	// Done, when set, stops Run early once closed (a cancelled context's
	// Done): the rules still to run and the rest of a long rule's records
	// are skipped, so the findings are incomplete and the caller drops them.
	Done <-chan struct{}
	// Analyze, when set, replaces lexical.Analyze for the texts the rules
	// compare: a caller linting the same records again (the language server
	// on every keystroke) passes a memo. It must return what
	// lexical.Analyze would and be safe for concurrent use.
	Analyze func(string) *lexical.Text
	// Memo, when set, keeps the conflicts an edit of the agent file cannot
	// change between runs over the same Facts (see Memo).
	Memo *Memo
}

// StoreFacts are what the caller read from the store for one agent.
type StoreFacts struct {
	// Promoted are the agent's valid, promoted records.
	Promoted []schema.MemoryRecord
	// Candidates are the agent's valid, targeted, unpromoted records still
	// under review.
	Candidates []schema.MemoryRecord
	// Rejected are valid, unpromoted records whose promotion a human
	// rejected, with no evidence since (store.IsRejected): not candidates.
	Rejected []schema.MemoryRecord
	// Proposals are the agent's pending proposals.
	Proposals []store.Proposal
	// Progress maps a candidate id to its recurrence progress; a missing id
	// is computed from the record and promotion.recurrence.
	Progress map[string]Progress
	// Now is the current time (schema.FormatTime); "" skips time-based rules.
	Now string
}

// Progress is a candidate's progress toward promotion: distinct
// conversations it has and needs (0 when its tier does not count them).
type Progress struct {
	Have int `json:"have"`
	Need int `json:"need"`
}

// Finding is one lint result at a file range.
type Finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	// Pointer is the JSON Pointer the finding is about (in config′ for
	// memory-derived places); Range is its text in the file, or that of its
	// nearest existing ancestor key.
	Pointer string       `json:"pointer"`
	Range   schema.Range `json:"range"`
	Related []Related    `json:"related,omitempty"`
	Fixes   []Fix        `json:"fixes,omitempty"`
}

// Related is another place or record a finding involves.
type Related struct {
	Pointer  string `json:"pointer,omitempty"`
	RecordID string `json:"recordId,omitempty"`
	// Range is set with Pointer: the related place in the file.
	Range   *schema.Range `json:"range,omitempty"`
	Message string        `json:"message"`
}

// Fix is a command that resolves a finding (an LSP code action).
type Fix struct {
	Title   string `json:"title"`
	Command string `json:"command"`
	Args    any    `json:"args"`
}

// Commands fixes invoke (docs/LSP-PROTOCOL.md).
const (
	CommandSupersede = "agent-ls.supersede"
	CommandApprove   = "agent-ls.approve"
	CommandReject    = "agent-ls.reject"
)

// SupersedeArgs are the arguments of agent-ls.supersede.
type SupersedeArgs struct {
	KeepID string `json:"keepId"`
	DropID string `json:"dropId"`
}

// ProposalArgs are the arguments of agent-ls.approve and agent-ls.reject.
type ProposalArgs struct {
	ProposalID string `json:"proposalId"`
	Reason     string `json:"reason,omitempty"`
}

// RuleInfo documents a rule.
type RuleInfo struct {
	ID              string `json:"id"`
	Doc             string `json:"doc"`
	DefaultSeverity string `json:"defaultSeverity"`
	// Workspace: the rule looks at the workspace and its store as a whole
	// (agent-ls lint DIR), not at one agent file, so it has no fixtures.
	Workspace bool `json:"workspace,omitempty"`
}

// Rule ids, stable: stated once in schema (schema.LintRuleIDs), which the
// workspace config's lint.rules is checked against.
const (
	RuleSchema            = schema.RuleSchema
	RuleCeilingExceeded   = schema.RuleCeilingExceeded
	RuleBudgetSpill       = schema.RuleBudgetSpill
	RuleAuthoredWins      = schema.RuleAuthoredWins
	RuleMemoryConflict    = schema.RuleMemoryConflict
	RuleUnknownDomain     = schema.RuleUnknownDomain
	RuleMissingPayload    = schema.RuleMissingPayload
	RuleContradiction     = schema.RuleContradiction
	RulePendingReview     = schema.RulePendingReview
	RuleStaleState        = schema.RuleStaleState
	RuleNearDuplicate     = schema.RuleNearDuplicate
	RuleCandidateProgress = schema.RuleCandidateProgress
	RuleStructuredContent = schema.RuleStructuredContent
)

type rule struct {
	info RuleInfo
	run  func(c *runCtx) []Finding
}

func rules() []rule {
	return []rule{
		{RuleInfo{ID: RuleSchema, Doc: "the agent file violates the agent JSON Schema (or defines a judgment domain twice)", DefaultSeverity: schema.SeverityError}, nil},
		{RuleInfo{ID: RuleCeilingExceeded, Doc: "memory-derived text exceeds the composition ceiling of .agent-ls.yaml (a hard failure: it cannot be turned off, downgraded or suppressed)", DefaultSeverity: schema.SeverityError}, ruleCeiling},
		{RuleInfo{ID: RuleBudgetSpill, Doc: "promoted memories over a primitive's budget spill to the recall block (ids listed)", DefaultSeverity: schema.SeverityWarning}, ruleBudgetSpill},
		{RuleInfo{ID: RuleAuthoredWins, Doc: "a promoted memory targets a key or name the authored config holds: the authored value wins", DefaultSeverity: schema.SeverityInfo}, ruleAuthoredWins},
		{RuleInfo{ID: RuleMemoryConflict, Doc: "two promoted memories hold the same slot: the newer renders, the other is shadowed", DefaultSeverity: schema.SeverityWarning}, ruleMemoryConflict},
		{RuleInfo{ID: RuleUnknownDomain, Doc: "a memory targets a judgment domain or capability the agent does not define", DefaultSeverity: schema.SeverityWarning}, ruleUnknownDomain},
		{RuleInfo{ID: RuleMissingPayload, Doc: "an example or awareness memory lacks its complete structured payload", DefaultSeverity: schema.SeverityWarning}, ruleMissingPayload},
		{RuleInfo{ID: RuleContradiction, Doc: "a candidate contradicts an authored or promoted heuristic or constraint of its domain", DefaultSeverity: schema.SeverityWarning}, ruleContradiction},
		{RuleInfo{ID: RulePendingReview, Doc: "a promotion or demotion of this agent waits for a human's approval", DefaultSeverity: schema.SeverityInfo}, rulePendingReview},
		{RuleInfo{ID: RuleStaleState, Doc: "a promoted currentState fact was not updated within staleAfter", DefaultSeverity: schema.SeverityInfo}, ruleStaleState},
		{RuleInfo{ID: RuleNearDuplicate, Doc: "memories of one slot (one finding per group of restatements), or a memory and an authored line, state the same lesson", DefaultSeverity: schema.SeverityInfo}, ruleNearDuplicate},
		{RuleInfo{ID: RuleOrphanRecords, Doc: "stored records of an agent no agent file in the workspace names (reported when linting a directory)", DefaultSeverity: schema.SeverityWarning, Workspace: true}, nil},
		{RuleInfo{ID: RuleStructuredContent, Doc: "a memory's content has line breaks or starts with Markdown structure: it renders folded into one line of its slot", DefaultSeverity: schema.SeverityWarning}, ruleStructuredContent},
		{RuleInfo{ID: RuleCandidateProgress, Doc: "a candidate memory and its progress toward promotion (more than ten on one target: one finding counting them by state)", DefaultSeverity: schema.SeverityHint}, ruleCandidateProgress},
	}
}

// Rules documents every rule, in a stable order.
func Rules() []RuleInfo {
	rs := rules()
	out := make([]RuleInfo, len(rs))
	for i, r := range rs {
		out[i] = r.info
	}
	return out
}

// Severity returns the effective severity of a rule under the workspace's
// lint.rules overrides: a severity name, or SeverityOff.
func Severity(settings schema.WorkspaceConfig, ruleID string) string {
	def := ""
	for _, r := range rules() {
		if r.info.ID == ruleID {
			def = r.info.DefaultSeverity
		}
	}
	if schema.HardRule(ruleID) {
		return def
	}
	switch s := strings.ToLower(settings.Lint.Rules[ruleID]); s {
	case SeverityOff, schema.SeverityError, schema.SeverityWarning, schema.SeverityInfo, schema.SeverityHint:
		return s
	}
	if def == "" {
		return schema.SeverityError
	}
	return def
}

// Run applies every enabled rule and returns the findings not suppressed by
// a `# agent-ls: ignore RULE reason` comment (on the finding's line or the
// line above), ordered by range, then rule, then message. It is pure and
// deterministic (until in.Done closes).
func Run(in Input) []Finding {
	if in.Doc == nil {
		return nil
	}
	c := newRunCtx(in)
	var all []Finding
	sev := func(id string) string { return Severity(in.Settings, id) }
	if s := sev(RuleSchema); s != SeverityOff {
		for _, p := range schema.ValidateAgent(in.Doc) {
			all = append(all, Finding{Rule: p.Rule, Severity: s, Message: p.Message, Pointer: p.Pointer, Range: p.Range})
		}
	}
	if in.Config != nil {
		for _, r := range rules() {
			if r.run == nil {
				continue
			}
			s := sev(r.info.ID)
			if s == SeverityOff {
				continue
			}
			if c.stopped() {
				break
			}
			for _, f := range r.run(c) {
				f.Rule, f.Severity = r.info.ID, s
				all = append(all, f)
			}
		}
	}
	for _, p := range append(schema.HardRuleProblems(in.Doc), schema.UnknownRuleSuppressions(in.Doc)...) {
		all = append(all, Finding{Rule: p.Rule, Severity: p.Severity, Message: p.Message, Pointer: p.Pointer, Range: p.Range})
	}
	out := all[:0]
	for _, f := range all {
		if schema.HardRule(f.Rule) || !in.Doc.Suppressed(f.Rule, f.Range.Start.Line) {
			out = append(out, f)
		}
	}
	Sort(out)
	return out
}

// Sort orders findings by start, end, rule and message.
func Sort(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(a.Range.Start.Line, b.Range.Start.Line),
			cmp.Compare(a.Range.Start.Character, b.Range.Start.Character),
			cmp.Compare(a.Range.End.Line, b.Range.End.Line),
			cmp.Compare(a.Range.End.Character, b.Range.End.Character),
			strings.Compare(a.Rule, b.Rule),
			strings.Compare(a.Message, b.Message),
		)
	})
}

// Problems converts findings to schema.Problems (what lsp.Linter returns).
func Problems(fs []Finding) []schema.Problem {
	out := make([]schema.Problem, len(fs))
	for i, f := range fs {
		out[i] = schema.Problem{Rule: f.Rule, Severity: f.Severity, Message: f.Message, Pointer: f.Pointer, Range: f.Range}
	}
	return out
}

// Analysis is a line's lexical analysis (the text kernel's words and
// polarity) that the rules compare; a host that lints often memoizes it
// (Options' analyze functions) with an Interner.
type Analysis = lexical.Text

// Interner analyzes texts sharing their words' storage.
type Interner = lexical.Interner
