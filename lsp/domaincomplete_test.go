package lsp

import (
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// TestDomainCompletionQuoted: a memory target's domain completes with the
// judgment domains of the agent files beside it, inserted as written. A
// domain that needs quoting in YAML ("on call: nights") was inserted raw,
// "domain: on call: nights", which does not parse; one with a line break
// (a hostile sibling file's "x\n  persona: ...") inserted YAML of its
// own; in JSON, Go's quoting ("\a") is not JSON. Each is now a YAML or
// JSON string, and a domain that breaks the identifier rule (a control
// character) is not offered at all.
func TestDomainCompletionQuoted(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true})
	c.initialize(env.root, nil, false)
	env.write(t, "sib.agent.json", `{"roleTemplate": {"name": "s", "persona": {"identity": "i", "tone": "t"}, "judgments": [`+
		`{"domain": "on call: nights"}, {"domain": "x\n  persona: {identity: pwned}"}, {"domain": "bell\u0007"}, {"domain": "deploy"}]}, "mission": {"objective": "o"}}`)
	for _, tt := range []struct {
		file, text string
		pos        protocol.Position
		want       map[string]string
	}{
		{"r.memory.yaml", "target:\n  primitive: judgment\n  domain: \n", protocol.Position{Line: 2, Character: 10},
			map[string]string{"deploy": "deploy", "on call: nights": `"on call: nights"`}},
		{"r.memory.json", `{"target": {"primitive": "judgment", "domain": `, protocol.Position{Line: 0, Character: 48},
			map[string]string{"deploy": `"deploy"`, "on call: nights": `"on call: nights"`}},
	} {
		uri := pathToURI(env.write(t, tt.file, tt.text))
		var list protocol.CompletionList
		c.call(protocol.MethodTextDocumentCompletion, map[string]any{"textDocument": map[string]any{"uri": uri}, "position": tt.pos}, &list)
		got := map[string]string{}
		for _, it := range list.Items {
			got[it.Label] = it.TextEdit.NewText
		}
		for label, text := range tt.want {
			if got[label] != text {
				t.Errorf("%s: %q inserts %q, want %q (items %q)", tt.file, label, got[label], text, got)
			}
		}
		if len(got) != len(tt.want) {
			t.Errorf("%s: items %q, want only %q", tt.file, got, tt.want)
		}
	}
}

// TestAddJudgmentFixJSONString: the quick fix adding a stored memory's
// missing judgment domain to a JSON agent wrote the domain with Go's
// quoting, which for a character Go does not print (a private-use one of
// plane 15, which identifiers allow) is "\U000f0000": not JSON, so the fix
// broke the file. It is a JSON string.
func TestAddJudgmentFixJSONString(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	domain := "ops\U000F0000"
	agent := func(domains ...string) string {
		js := ""
		for i, d := range domains {
			if i > 0 {
				js += ", "
			}
			js += `{"domain": "` + d + `", "heuristics": ["h"]}`
		}
		return `{"roleTemplate": {"name": "j", "persona": {"identity": "i", "tone": "t"}, "judgments": [` + js + `]}, "mission": {"objective": "o"}}` + "\n"
	}
	if res := agentSave(t, env, agent("deploy", domain), "Page the owner", "judgment."+domain+".heuristics", "conv-3"); res.Record == nil {
		t.Fatalf("save: %+v", res)
	}
	text := agent("deploy")
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now), Lint: LintEngine()})
	c.initialize(env.root, nil, false)
	path := env.write(t, "j.agent.json", text)
	uri := c.open(path, text, 1)
	actions := c.actionsForDiagnostic(uri, "unknown-domain")
	var fix *protocol.CodeAction
	for i := range actions {
		if strings.HasPrefix(actions[i].Title, "Add judgment domain") && actions[i].Edit != nil {
			fix = &actions[i]
		}
	}
	if fix == nil {
		t.Fatalf("no add-judgment quick fix in %+v", actions)
	}
	fixed := applyEdits(t, text, fix.Edit.Changes[uri])
	a := analyze(path, 0, []byte(fixed), nil)
	if a.agent == nil || a.agent.JudgmentByDomain(domain) < 0 {
		t.Fatalf("after the fix the agent has no judgment %q (%v):\n%s", domain, a.parseErr, fixed)
	}
}

// TestDomainCompletionSiblingsAsAgentFiles: the siblings a memory record's
// domain completion reads are the directory's agent files by the one rule
// (schema.IsAgentFile: its suffix in any case), in a directory whose name
// holds glob metacharacters too. They were found with filepath.Glob, which
// missed Ops.Agent.YAML and, under a directory named team[1], found nothing.
func TestDomainCompletionSiblingsAsAgentFiles(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true})
	c.initialize(env.root, nil, false)
	env.write(t, "team[1]/Ops.Agent.YAML", "roleTemplate:\n  name: ops\n  persona: {identity: i, tone: t}\n  judgments:\n    - domain: deploy\nmission: {objective: o}\n")
	uri := pathToURI(env.write(t, "team[1]/r.memory.yaml", "target:\n  primitive: judgment\n  domain: \n"))
	var list protocol.CompletionList
	c.call(protocol.MethodTextDocumentCompletion, map[string]any{"textDocument": map[string]any{"uri": uri},
		"position": protocol.Position{Line: 2, Character: 10}}, &list)
	var labels []string
	for _, it := range list.Items {
		labels = append(labels, it.Label)
	}
	if len(labels) != 1 || labels[0] != "deploy" {
		t.Errorf("domain completion = %q, want [deploy] from team[1]/Ops.Agent.YAML", labels)
	}
}

// TestRecordValuesOnlyInRecordShapedFiles: an editor that starts the
// server for every YAML file gets a memory record's values (kind,
// primitive, ...) only in a document shaped like a record (every top-level
// key a record's); a Kubernetes manifest's kind was offered memory kinds.
func TestRecordValuesOnlyInRecordShapedFiles(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true})
	c.initialize(env.root, nil, false)
	for _, tt := range []struct {
		file, text string
		pos        protocol.Position
		want       bool
	}{
		{"deploy.yaml", "apiVersion: apps/v1\nkind: \nmetadata:\n  name: web\n", protocol.Position{Line: 1, Character: 6}, false},
		{"compose.yaml", "services:\n  web:\n    target:\n      primitive: \n", protocol.Position{Line: 3, Character: 17}, false},
		{"r.memory.yaml", "content: Deploys go out on Thursdays\nkind: \n", protocol.Position{Line: 1, Character: 6}, true},
		{"r2.memory.yaml", "kind: fact\ntarget:\n  primitive: \n", protocol.Position{Line: 2, Character: 13}, true},
	} {
		uri := pathToURI(env.write(t, tt.file, tt.text))
		var list protocol.CompletionList
		c.call(protocol.MethodTextDocumentCompletion, map[string]any{"textDocument": map[string]any{"uri": uri}, "position": tt.pos}, &list)
		if got := len(list.Items) > 0; got != tt.want {
			var labels []string
			for _, it := range list.Items {
				labels = append(labels, it.Label)
			}
			t.Errorf("%s: completion %q; want items: %v", tt.file, labels, tt.want)
		}
	}
}
