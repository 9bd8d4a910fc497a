package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// TestScope: --scope adds to the workspace scope and never changes one of
// its values (issue 30).
func TestScope(t *testing.T) {
	t.Parallel()
	ws := map[string]string{"project": "atlas"}
	for _, tt := range []struct {
		name      string
		ws, flag  map[string]string
		want      string
		wantError bool
	}{
		{name: "none", want: ""},
		{name: "workspace only", ws: ws, want: "project=atlas"},
		{name: "flag only", flag: map[string]string{"agent": "a"}, want: "agent=a"},
		{name: "adds", ws: ws, flag: map[string]string{"agent": "a"}, want: "agent=a,project=atlas"},
		{name: "repeats", ws: ws, flag: map[string]string{"project": "atlas"}, want: "project=atlas"},
		{name: "contradicts", ws: ws, flag: map[string]string{"project": "other"}, wantError: true},
	} {
		got, err := Scope(tt.ws, tt.flag)
		var se *ScopeError
		if tt.wantError != errors.As(err, &se) {
			t.Errorf("%s: error %v, want one: %v", tt.name, err, tt.wantError)
			continue
		}
		if !tt.wantError && FormatScope(got) != tt.want {
			t.Errorf("%s: Scope = {%s}, want {%s}", tt.name, FormatScope(got), tt.want)
		}
	}
	if ws["agent"] != "" {
		t.Error("Scope changed the workspace scope")
	}
}

// TestCheckVisible: a record's scope must hold the workspace scope and
// name an agent some agent file of the workspace names.
func TestCheckVisible(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(schema.WorkspaceConfigName, "scope:\n  project: atlas\n")
	empty, err := workspace.Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	// No agent file yet: an agent name passes (nothing to check it against).
	if err := CheckVisible(empty, map[string]string{"project": "atlas", "agent": "ghost"}, nil); err != nil {
		t.Errorf("no agent files: %v", err)
	}
	write("deploy.agent.yaml", "roleTemplate:\n  name: deploy-ops\n")
	ws, _ := workspace.Find(dir)
	for _, tt := range []struct {
		scope map[string]string
		want  string // "" visible
	}{
		{map[string]string{"project": "atlas"}, ""},
		{map[string]string{"project": "atlas", "agent": "deploy-ops"}, ""},
		{map[string]string{"project": "atlas", "agent": "deploy-ops", "team": "x"}, ""},
		{map[string]string{"agent": "deploy-ops"}, "lacks the workspace scope's project=atlas"},
		{map[string]string{"project": "other", "agent": "deploy-ops"}, "lacks the workspace scope's project=atlas"},
		{map[string]string{"project": "atlas", "agent": "deploy-op"}, `names agent "deploy-op" (did you mean deploy-ops?)`},
	} {
		err := CheckVisible(ws, tt.scope, nil)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("{%s}: %v, want visible", FormatScope(tt.scope), err)
		case tt.want != "" && (!IsInvisible(err) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("{%s}: %v, want %q", FormatScope(tt.scope), err, tt.want)
		}
	}
	// The authored file a save runs with sees its own agent's records.
	cfg := &schema.AgentConfig{}
	cfg.RoleTemplate.Name = "elsewhere"
	if err := CheckVisible(ws, map[string]string{"project": "atlas", "agent": "elsewhere"}, cfg); err != nil {
		t.Errorf("explicit agent file: %v", err)
	}
}

// TestOneConversation: an agent's batch is one conversation and run (after
// normalization); a human's may name one per request.
func TestOneConversation(t *testing.T) {
	t.Parallel()
	agent := ViewOf(store.Actor{Kind: store.ActorAgent, Name: "deploy-ops"}, nil)
	human := ViewOf(store.Actor{Kind: store.ActorHuman, Name: "ana"}, nil)
	req := func(conv, run string) SaveRequest {
		return SaveRequest{Provenance: schema.Provenance{ConversationID: conv, RunID: run}}
	}
	for _, tt := range []struct {
		name  string
		v     View
		rs    []SaveRequest
		index int // -1: allowed
	}{
		{"agent one conversation", agent, []SaveRequest{req("b1", "r"), req("B1 ", "r")}, -1},
		{"agent two conversations", agent, []SaveRequest{req("b1", ""), req("b1", ""), req("b2", "")}, 2},
		{"agent two runs", agent, []SaveRequest{req("b1", "r1"), req("b1", "r2")}, 1},
		{"human two conversations", human, []SaveRequest{req("b1", ""), req("b2", "")}, -1},
	} {
		err := oneConversation(tt.v, tt.rs)
		var be *BatchError
		switch {
		case tt.index < 0 && err != nil:
			t.Errorf("%s: %v, want allowed", tt.name, err)
		case tt.index >= 0 && (!errors.As(err, &be) || be.Index != tt.index || !errors.Is(err, store.ErrInvalid)):
			t.Errorf("%s: %v, want an invalid request at %d", tt.name, err, tt.index)
		}
	}
}

// TestScopeAgentKeyCase: a scope key that is "agent" in another case
// (Agent, AGENT) is refused. It was an ordinary key, so `memory save
// --scope Agent=bot` saved a record with no agent key: a shared record that
// every agent of the workspace composes and reads, while the save said it
// was part of bot's composition.
func TestScopeAgentKeyCase(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"Agent", "AGENT", "aGent"} {
		_, err := Scope(map[string]string{"project": "atlas"}, map[string]string{k: "bot"})
		if err == nil || !strings.Contains(err.Error(), `scope key "`+k+`": did you mean "agent"?`) {
			t.Errorf("Scope with %s=bot: %v; want it refused", k, err)
		}
	}
	for _, k := range []string{"agent", "agents", "user_agent"} {
		if _, err := Scope(nil, map[string]string{k: "bot"}); err != nil {
			t.Errorf("Scope with %s=bot: %v", k, err)
		}
	}
}
