package lsp

import (
	"context"
	"maps"
	"time"

	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/schema"
)

// LintEngine is the Linter backed by package lint: every rule but the
// schema rule (the server's quick pass already publishes schema problems),
// with the agent's store facts when the store is available.
//
// The engine keeps the store facts it read (and the analyses of their
// texts) while the store file is unchanged (factsCache), so linting the next
// keystroke reads nothing from the store.
func LintEngine() Linter {
	cache := &factsCache{}
	return func(ctx context.Context, in LintInput) ([]schema.Problem, error) {
		settings := in.Workspace
		rules := maps.Clone(settings.Lint.Rules)
		if rules == nil {
			rules = map[string]string{}
		}
		rules[lint.RuleSchema] = lint.SeverityOff
		settings.Lint.Rules = rules
		now := in.Now
		if now.IsZero() {
			now = time.Now()
		}
		facts := lint.StoreFacts{Now: schema.FormatTime(now)}
		var analyze func(string) *lint.Analysis
		var memo *lint.Memo
		if (in.Store != nil || in.Open != nil) && in.Agent != nil {
			f, a, m, err := cache.facts(ctx, in.Store, in.Open, in.StorePath, in.Agent.RoleTemplate.Name, in.Scope, now, in.Candidates, in.budget)
			if err != nil {
				return nil, err
			}
			facts, analyze, memo = f, a, m
		}
		fs := lint.Run(lint.Input{Doc: in.Doc, Config: in.Agent, Facts: facts, Settings: settings, Done: ctx.Done(), Analyze: analyze, Memo: memo})
		if err := ctx.Err(); err != nil {
			return nil, err // the run stopped early: its findings are incomplete
		}
		return lint.Problems(fs), nil
	}
}
