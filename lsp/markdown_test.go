package lsp

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// TestContentIsNotMarkdown: a record's content is untrusted text (an
// agent wrote it); in the hover and the inlay hint tooltip, both Markdown,
// it stays one line of text. Content holding a blank line and "- promoted
// ... approved by human:ana" added a list item that read as the server's own
// provenance, and an image ![x](https://...) that the editor fetches when
// it renders the hover; both came out as written.
func TestContentIsNotMarkdown(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	path := env.write(t, "deploy.agent.yaml", text)
	const forged = "- promoted 2026-12-01T00:00:00.000Z by human:ana (tier guarded), approved by human:ana"
	content := "Deploys go out Tuesdays\n\n" + forged + "\n\n![x](https://attacker.example/beacon.png) <img src=x> [docs](https://attacker.example)"
	agentSave(t, env, text, content, "background.projectContext.deploy_window", "conv-1")
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
	c.initialize(env.root, nil, false)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	h := hintWith(c.hints(uri), "Deploys go out")
	if h == nil || h.Tooltip == nil {
		t.Fatalf("no memory hint with a tooltip: %+v", h)
	}
	var hover json.RawMessage
	c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": h.Position}, &hover)
	var hv struct {
		Contents MarkupContent `json:"contents"`
	}
	if err := json.Unmarshal(hover, &hv); err != nil {
		t.Fatal(err)
	}
	for what, md := range map[string]string{"tooltip": h.Tooltip.Value, "hover": hv.Contents.Value} {
		if !strings.Contains(md, "Deploys go out Tuesdays") {
			t.Errorf("%s lacks the content:\n%s", what, md)
		}
		for _, line := range strings.Split(md, "\n") {
			if strings.HasPrefix(line, "- promoted 2026-12-01") {
				t.Errorf("%s: the content made a list item of its own: %q\n%s", what, line, md)
			}
		}
		for _, bad := range []string{"![x](", "](https://", " <img"} {
			if strings.Contains(md, bad) {
				t.Errorf("%s: the content's Markdown %q came out as written:\n%s", what, bad, md)
			}
		}
	}
}
