package schema

import (
	"strings"
	"testing"
)

func TestDescribeAgent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ptr, contains string
	}{
		{"", "An agent definition"},
		{"/roleTemplate", "Who the agent is"},
		{"/roleTemplate/persona/identity", "You are {identity}."},
		{"/roleTemplate/judgments/3/heuristics", "Earned tier"},
		{"/roleTemplate/judgments/0/heuristics/2", "One heuristic."},
		{"/roleTemplate/judgments/0/examples/1/good", "check mark"},
		{"/roleTemplate/tone/anti_patterns", "snake_case"},
		{"/roleTemplate/recovery/maxAttempts", "Max attempts before escalating"},
		{"/roleTemplate/tone/examples/0/0", "label"},
		{"/background/projectContext", "### Project Context"},
		{"/background/projectContext/deploy_window", "A fact's value"},
		{"/awareness/domains/0/accessMethod", "(via accessMethod)"},
		{"/manuals/deploy/workflows", "Procedures"},
	}
	for _, tt := range tests {
		got, ok := DescribeAgent(tt.ptr)
		if !ok || !strings.Contains(got, tt.contains) {
			t.Errorf("DescribeAgent(%q) = %q, %v; want it to contain %q", tt.ptr, got, ok, tt.contains)
		}
	}
	for _, ptr := range []string{"/nope", "/roleTemplate/persona/mood", "/roleTemplate/name/x"} {
		if d, ok := DescribeAgent(ptr); ok {
			t.Errorf("DescribeAgent(%q) = %q, want none", ptr, d)
		}
	}
}

func TestAgentProperties(t *testing.T) {
	t.Parallel()
	var names []string
	req := map[string]bool{}
	for _, p := range AgentProperties("/roleTemplate/judgments/0") {
		names = append(names, p.Name)
		req[p.Name] = p.Required
		if p.Description == "" {
			t.Errorf("%s: no description", p.Name)
		}
	}
	if got := strings.Join(names, ","); got != "constraints,domain,escalationTriggers,examples,heuristics" {
		t.Errorf("judgment properties %s", got)
	}
	if !req["domain"] || req["heuristics"] {
		t.Errorf("required flags %v", req)
	}
	if n := len(AgentProperties("/roleTemplate/recovery")); n != 3 {
		t.Errorf("recovery (nullable object) has %d properties, want 3", n)
	}
	if n := len(AgentProperties("")); n != 8 {
		t.Errorf("root has %d properties, want 8", n)
	}
	if ps := AgentProperties("/roleTemplate/name"); len(ps) != 0 {
		t.Errorf("a string has properties %v", ps)
	}
}

// TestWorkspaceSchemaDoc: the workspace config's schema answers the same
// questions as the agent's (editor completion and hover in .agent-ls.yaml).
func TestWorkspaceSchemaDoc(t *testing.T) {
	t.Parallel()
	sd := SchemaDocFor(FileWorkspace)
	var names []string
	for _, p := range sd.Properties("") {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, ","); !strings.Contains(got, "actor,budgets,ceiling,eval,limits,lint,promotion") || strings.Contains(got, "roleTemplate") {
		t.Errorf("workspace root properties %s", got)
	}
	req := map[string]bool{}
	for _, p := range sd.Properties("/eval") {
		req[p.Name] = p.Required
	}
	if !req["command"] || req["timeout"] || len(req) != 3 {
		t.Errorf("eval properties %v", req)
	}
	tests := []struct {
		ptr  string
		want string // comma-joined enum, "" for none
	}{
		{"/eval/require", "non-regression,improvement"},
		{"/lint/rules/near-duplicate", "off,error,warning,info,hint"},
		{"/store", ""},
		{"/nope", ""},
	}
	for _, tt := range tests {
		if got := strings.Join(sd.Enum(tt.ptr), ","); got != tt.want {
			t.Errorf("Enum(%q) = %q, want %q", tt.ptr, got, tt.want)
		}
	}
	for ptr, want := range map[string]string{"/eval": "object", "/eval/command": "array", "/ceiling": "integer", "/store": "string", "/nope": ""} {
		if got := sd.Type(ptr); got != want {
			t.Errorf("Type(%q) = %q, want %q", ptr, got, want)
		}
	}
	if got := SchemaDocFor(FileAgent).Type("/roleTemplate/persona"); got != "object" {
		t.Errorf("agent Type(/roleTemplate/persona) = %q", got)
	}
	if d, ok := sd.Describe("/promotion/proposalExpiry"); !ok || !strings.Contains(d, "guarded-tier proposal") {
		t.Errorf("Describe(/promotion/proposalExpiry) = %q, %v", d, ok)
	}
	if got := strings.Join(SchemaDocFor(FileAgent).Enum("/roleTemplate/source"), ","); got != "library,custom" {
		t.Errorf("agent enum /roleTemplate/source = %q", got)
	}
	if got := SchemaDocFor(FileRecords).Enum("/kind"); len(got) < 4 {
		t.Errorf("record enum /kind = %v", got)
	}
}
