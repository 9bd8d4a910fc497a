package lsp

import (
	"testing"

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
