package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTierTableAgrees (issue 21 item 10): every target the tier table of
// docs/TIERS.md names gets the answer of its row from `memory save`: the locked
// ones (persona included, and manual workflows) are refused saying
// "locked" and the table's reason, never "unknown primitive".
func TestTierTableAgrees(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(repoRoot, "docs", "TIERS.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(string(readme), "\n") {
		for _, tier := range []string{"auto", "earned", "guarded", "locked"} {
			if strings.HasPrefix(l, "| "+tier+" | ") {
				rows[tier] = l
			}
		}
	}
	cases := []struct {
		target, tier, mention string // mention: how the table's row names it
	}{
		{"background.projectContext.deploy_window", "auto", "background.*"},
		{"awareness", "auto", "awareness"},
		{"judgment.refunds.heuristics", "earned", "judgment.heuristics"},
		{"example.refunds", "earned", "example"},
		{"judgment.refunds.constraints", "guarded", "judgment.constraints"},
		{"judgment.refunds.escalationTriggers", "guarded", "judgment.escalationTriggers"},
		{"recovery", "guarded", "recovery"},
		{"persona", "locked", "persona"},
		{"tone", "locked", "tone"},
		{"methodology", "locked", "methodology"},
		{"mission", "locked", "mission"},
		{"manual.deploy.workflows", "locked", "manual.*.workflows"},
		{"judgment.brand-new-domain.heuristics", "locked", "new judgment domains"},
	}
	for _, tc := range cases {
		t.Run(tc.target, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(rows[tc.tier], tc.mention) {
				t.Errorf("docs/TIERS.md tier table row %q does not name %s", rows[tc.tier], tc.mention)
			}
			dir := t.TempDir()
			writeAgentFile(t, dir)
			// Each primitive's payload as its schema has it (one validator
			// refuses another primitive's fields).
			args := []string{"memory", "--store", filepath.Join(dir, "m.db"), "--format", "json", "save",
				"--scope", "agent=support-bot", "--agent", filepath.Join(dir, "support.agent.yaml"), "--actor", "agent:support-bot",
				"--target", tc.target, "--conversation", "c1", "--content", "a lesson"}
			switch {
			case strings.HasPrefix(tc.target, "awareness"):
				args = append(args, "--payload", `{"name":"n","description":"d","accessMethod":"a"}`)
			case strings.HasPrefix(tc.target, "example"):
				args = append(args, "--payload", `{"scenario":"s","good":"g"}`)
			}
			r := runBin(t, dir, "", nil, args...)
			if tc.tier == "locked" {
				if r.code != exitFindings || !strings.Contains(r.stderr, "locked") || strings.Contains(r.stderr, "unknown primitive") {
					t.Fatalf("save to %s: exit %d, want 1 saying locked\n%s%s", tc.target, r.code, r.stdout, r.stderr)
				}
				if strings.HasPrefix(tc.target, "judgment.") {
					return // a new domain is refused with its own reason
				}
				if !strings.Contains(r.stderr, "persona, tone, methodology, mission, manual workflows") {
					t.Errorf("save to %s does not give the tier table's reason: %s", tc.target, r.stderr)
				}
				return
			}
			if r.code != exitOK || !strings.Contains(r.stdout, `"tier": "`+tc.tier+`"`) {
				t.Errorf("save to %s: exit %d, want tier %s\n%s%s", tc.target, r.code, tc.tier, r.stdout, r.stderr)
			}
		})
	}
}

// writeAgentFile writes the support agent (judgment domain refunds) to dir.
func writeAgentFile(t *testing.T, dir string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "agents", "support.agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "support.agent.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
