package lint_test

import (
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/schema"
)

// TestCeilingIsHard (issue 21 item 6): the ceiling cannot be turned off,
// downgraded or suppressed; a config that tries is a config error naming
// its line; the limit stays configurable.
func TestCeilingIsHard(t *testing.T) {
	t.Parallel()
	cfgCases := []struct {
		name, yaml string
		line       int // 1-based line of the config error; 0: none
	}{
		{"off", "ceiling: 40\nlint:\n  rules:\n    ceiling-exceeded: off\n", 4},
		{"info", "ceiling: 40\nlint:\n  rules:\n    ceiling-exceeded: info\n", 4},
		{"warning", "lint: {rules: {ceiling-exceeded: warning}}\n", 1},
		{"error is allowed", "ceiling: 40\nlint:\n  rules:\n    ceiling-exceeded: error\n", 0},
		{"the limit is configurable", "ceiling: 100\n", 0},
	}
	for _, tc := range cfgCases {
		t.Run("config "+tc.name, func(t *testing.T) {
			t.Parallel()
			_, ps, err := schema.ParseWorkspaceConfig(".agent-ls.yaml", []byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if tc.line == 0 {
				if len(ps) != 0 {
					t.Fatalf("problems %v", ps)
				}
				return
			}
			if len(ps) != 1 || ps[0].Range.Start.Line+1 != tc.line || !strings.Contains(ps[0].Message, "ceiling-exceeded is a hard failure") {
				t.Fatalf("problems %+v, want one hard-failure error on line %d", ps, tc.line)
			}
		})
	}

	// Even with the config decoded around the check, lint stays an error.
	in := fixtureInput(t, lint.RuleCeilingExceeded, "positive")
	for _, sev := range []string{"off", "info", "hint", "warning"} {
		in.Settings.Lint.Rules = map[string]string{lint.RuleCeilingExceeded: sev}
		fs := only(lint.Run(in), lint.RuleCeilingExceeded)
		if len(fs) != 1 || fs[0].Severity != schema.SeverityError {
			t.Errorf("rules %s: findings %v, want one error", sev, brief(fs))
		}
	}

	// An inline ignore does not suppress it, and is itself an error there.
	in = fixtureInput(t, lint.RuleCeilingExceeded, "positive")
	src := "# agent-ls: ignore ceiling-exceeded too long, fine\n" + string(in.Doc.Source())
	doc, cfg, _, err := schema.LoadAgent("support.agent.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	in.Doc, in.Config = doc, cfg
	fs := only(lint.Run(in), lint.RuleCeilingExceeded)
	var over, refused bool
	for _, f := range fs {
		over = over || strings.Contains(f.Message, "over the composition ceiling")
		refused = refused || (f.Range.Start.Line == 0 && strings.Contains(f.Message, "cannot be suppressed") && f.Severity == schema.SeverityError)
	}
	if !over || !refused {
		t.Errorf("inline ignore: findings %v", brief(fs))
	}
}
