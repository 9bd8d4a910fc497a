package lsp

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/store"
)

// TestConfigReadOnly: a .agent-ls.yaml that does not parse or names an
// actor that does not parse makes the server read-only: the config problem
// is a diagnostic at its line:col, hints keep working, and approving the
// pending proposal is refused with codeReadOnly instead of acting as
// human:unknown or human:$USER (issue 19, item 5).
func TestConfigReadOnly(t *testing.T) {
	t.Parallel()
	text := deployText(t)
	for _, tt := range []struct {
		name, config string
		line         uint32 // 0-based line of the diagnostic
	}{
		{"kind capitalized", "actor: Agent:alpha\n", 0},
		{"no kind", "store: .agent-memory/memory.db\nactor: agent-alpha\n", 1},
		{"syntax error", "actor: agent:alpha\nscope: [unclosed\n", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t)
			cfgPath := env.write(t, ".agent-ls.yaml", tt.config)
			path := env.write(t, "deploy.agent.yaml", text)
			res := agentSave(t, env, text, trigger, "judgment.deploy.escalationTriggers", "conv-9")
			if res.ProposalID == "" {
				t.Fatalf("save trigger: %+v", res)
			}
			c := startServer(t, Options{OpenStore: boltOpener(time.Now), NoWatch: true,
				Getenv: func(k string) string {
					if k == "USER" {
						return "mallory"
					}
					return ""
				}})
			c.initialize(env.root, nil, true)
			uri := c.open(path, text, 1)
			c.awaitDiagnostics(uri, 1)
			cfgURI := pathToURI(cfgPath)
			c.waitFor("config diagnostic", func(ns, _ []note) bool {
				for _, d := range diagsOf(ns, cfgURI) {
					for _, dg := range d.Diagnostics {
						if dg.Range.Start.Line == tt.line && strings.Contains(dg.Message, "read-only") {
							return true
						}
					}
				}
				return false
			})
			// Hints keep working: the pending trigger shows as a candidate.
			if h := hintWith(c.hints(uri), trigger); h == nil {
				t.Errorf("no candidate hint in read-only mode")
			}
			var out CommandResult
			err := c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": CommandApprove,
				"arguments": []any{map[string]any{"uri": uri, "proposalId": res.ProposalID}}}, &out)
			var je *jsonrpc2.Error
			if !errors.As(err, &je) || je.Code != codeReadOnly || !strings.Contains(je.Message, "read-only") {
				t.Fatalf("approve in read-only mode: %v (%+v), want codeReadOnly", err, out)
			}
			// The review queue still reads (without expiring anything).
			var props struct {
				Proposals []ProposalView `json:"proposals"`
			}
			c.call(methodProposals, map[string]any{"uri": uri}, &props)
			if len(props.Proposals) != 1 || props.Proposals[0].ID != res.ProposalID {
				t.Errorf("proposals in read-only mode: %+v", props.Proposals)
			}
			// Nothing was approved.
			c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": CommandShowComposedPrompt,
				"arguments": []any{map[string]any{"uri": uri}}}, nil)
			withBolt(t, env, func(st store.Store) {
				p, err := st.GetProposal(t.Context(), res.ProposalID)
				if err != nil || p.State != "pending" {
					t.Errorf("proposal after refused approval: %+v, %v", p, err)
				}
			})
		})
	}
}

// TestReadOnlyCodeActions: in a read-only workspace the actions that would
// change the store are not offered as if they worked: a client that shows
// disabled actions gets them disabled with the reason, another does not
// get them; the quick fixes that only edit the file stay.
func TestReadOnlyCodeActions(t *testing.T) {
	t.Parallel()
	text := deployText(t)
	for _, tt := range []struct {
		name            string
		config          string
		disabledSupport bool
		want            string // "enabled", "disabled" or "absent"
	}{
		{"writable", "actor: human:ana\n", true, "enabled"},
		{"read-only, disabledSupport", "actor: Agent:alpha\n", true, "disabled"},
		{"read-only, no disabledSupport", "actor: Agent:alpha\n", false, "absent"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t)
			env.write(t, ".agent-ls.yaml", tt.config)
			path := env.write(t, "deploy.agent.yaml", text)
			if res := agentSave(t, env, text, trigger, "judgment.deploy.escalationTriggers", "conv-9"); res.ProposalID == "" {
				t.Fatalf("save trigger: %+v", res)
			}
			c := startServer(t, Options{OpenStore: boltOpener(time.Now), NoWatch: true})
			if tt.disabledSupport {
				c.caps = func(caps map[string]any) {
					caps["textDocument"].(map[string]any)["codeAction"] = map[string]any{"disabledSupport": true}
				}
			}
			c.initialize(env.root, nil, true)
			uri := c.open(path, text, 1)
			c.awaitDiagnostics(uri, 1)
			var actions []protocol.CodeAction
			c.call(protocol.MethodTextDocumentCodeAction, map[string]any{"textDocument": map[string]any{"uri": uri},
				"range":   map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 9999, "character": 0}},
				"context": map[string]any{"diagnostics": []any{}}}, &actions)
			var approve *protocol.CodeAction
			for i := range actions {
				if strings.HasPrefix(actions[i].Title, "Approve ") {
					approve = &actions[i]
				}
			}
			got := "absent"
			switch {
			case approve == nil:
			case approve.Disabled == nil:
				got = "enabled"
			case strings.Contains(approve.Disabled.Reason, "read-only") && strings.Contains(approve.Disabled.Reason, ".agent-ls.yaml:1:8"):
				got = "disabled"
			default:
				got = "disabled without the reason: " + approve.Disabled.Reason
			}
			if got != tt.want {
				t.Errorf("approve action: %s, want %s (actions %+v)", got, tt.want, actions)
			}
		})
	}
}

// TestAgentActorCodeActions: a server acting as an agent (actor
// agent:NAME) does not offer as if they worked the code actions the trust
// model refuses it — approve and reject (only a human decides a proposal)
// and adopt (only a human edits the authored file): a client with
// codeAction.disabledSupport gets them disabled with the reason, another
// client does not get them. It offered all three, and each answered
// "refused" when chosen. The actions it may run stay enabled.
func TestAgentActorCodeActions(t *testing.T) {
	t.Parallel()
	text := deployText(t)
	for _, disabledSupport := range []bool{true, false} {
		t.Run(fmt.Sprintf("disabledSupport=%v", disabledSupport), func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t)
			env.write(t, ".agent-ls.yaml", "actor: agent:deploy-ops\n")
			path := env.write(t, "deploy.agent.yaml", text)
			agentSave(t, env, text, "Deploys go out Tuesdays", "background.projectContext.deploy_window", "conv-1")
			if res := agentSave(t, env, text, "Ask before a schema migration", "judgment.deploy.escalationTriggers", "conv-2"); res.ProposalID == "" {
				t.Fatalf("save trigger: %+v", res)
			}
			c := startServer(t, Options{OpenStore: boltOpener(time.Now), NoWatch: true})
			if disabledSupport {
				c.caps = func(caps map[string]any) {
					caps["textDocument"].(map[string]any)["codeAction"] = map[string]any{"disabledSupport": true}
				}
			}
			c.initialize(env.root, nil, false)
			uri := c.open(path, text, 1)
			c.awaitDiagnostics(uri, 1)
			var actions []protocol.CodeAction
			c.call(protocol.MethodTextDocumentCodeAction, map[string]any{"textDocument": map[string]any{"uri": uri},
				"range":   map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 9999, "character": 0}},
				"context": map[string]any{"diagnostics": []any{}}}, &actions)
			state := map[string]string{}
			for _, a := range actions {
				if a.Command == nil {
					continue
				}
				got := "enabled"
				if a.Disabled != nil {
					got = "disabled: " + a.Disabled.Reason
				}
				state[a.Command.Command] = got
			}
			for _, cmd := range []string{CommandDemote, CommandInvalidate} {
				if state[cmd] != "enabled" {
					t.Errorf("%s: %q, want enabled (actions %+v)", cmd, state[cmd], actions)
				}
			}
			for _, cmd := range []string{CommandApprove, CommandReject, CommandAdopt} {
				got := state[cmd]
				if !disabledSupport && got != "" {
					t.Errorf("%s offered to agent:deploy-ops: %q, want it left out", cmd, got)
				}
				if disabledSupport && (!strings.HasPrefix(got, "disabled: ") || !strings.Contains(got, "agent:deploy-ops") || !strings.Contains(got, "human")) {
					t.Errorf("%s offered to agent:deploy-ops: %q, want it disabled with the reason", cmd, got)
				}
			}
		})
	}
}

// TestConfigSavedInEditor: fixing .agent-ls.yaml in the editor and saving
// it ends read-only mode without a file watcher (fsnotify off or out of
// watches): the save is the config's change. It stayed read-only until
// the server restarted.
func TestConfigSavedInEditor(t *testing.T) {
	t.Parallel()
	text := deployText(t)
	env := newTestEnv(t)
	cfgPath := env.write(t, ".agent-ls.yaml", "actor: Agent:alpha\n")
	path := env.write(t, "deploy.agent.yaml", text)
	res := agentSave(t, env, text, trigger, "judgment.deploy.escalationTriggers", "conv-9")
	c := startServer(t, Options{OpenStore: boltOpener(time.Now), NoWatch: true})
	c.initialize(env.root, nil, false)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	approve := func() error {
		var out CommandResult
		return c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": CommandApprove,
			"arguments": []any{map[string]any{"uri": uri, "proposalId": res.ProposalID}}}, &out)
	}
	var je *jsonrpc2.Error
	if err := approve(); !errors.As(err, &je) || je.Code != codeReadOnly {
		t.Fatalf("approve with the broken config: %v, want codeReadOnly", err)
	}
	// The user opens the config, fixes the actor and saves.
	cfgURI := c.open(cfgPath, "actor: Agent:alpha\n", 1)
	c.change(cfgURI, "actor: human:ana\n", 2)
	if err := os.WriteFile(cfgPath, []byte("actor: human:ana\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.notify(protocol.MethodTextDocumentDidSave, map[string]any{"textDocument": map[string]any{"uri": cfgURI}, "text": "actor: human:ana\n"})
	if err := approve(); err != nil {
		t.Fatalf("approve after the config was fixed and saved: %v", err)
	}
}
