package lint_test

import (
	"testing"

	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/schema"
)

func TestOrphans(t *testing.T) {
	t.Parallel()
	counts := map[string]int{"support-bot": 3, "suport-bot": 2, "": 4, "zzz": 1}
	names := []string{"support-bot", "triage-bot"}
	got := lint.Orphans(counts, names, schema.WorkspaceConfig{})
	if len(got) != 2 {
		t.Fatalf("findings %+v, want suport-bot and zzz", got)
	}
	want0 := `2 records of agent "suport-bot": no agent file in the workspace names that agent, so no composition shows them (did you mean support-bot?)`
	if got[0].Message != want0 || got[0].Rule != lint.RuleOrphanRecords || got[0].Severity != schema.SeverityWarning {
		t.Errorf("finding 0 = %+v\nwant message %q", got[0], want0)
	}
	if got[1].Message != `1 record of agent "zzz": no agent file in the workspace names that agent, so no composition shows them` {
		t.Errorf("finding 1 = %q", got[1].Message)
	}
	off := schema.WorkspaceConfig{}
	off.Lint.Rules = map[string]string{lint.RuleOrphanRecords: "off"}
	if got := lint.Orphans(counts, names, off); len(got) != 0 {
		t.Errorf("rule off: %+v", got)
	}
}
