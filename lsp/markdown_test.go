package lsp

import (
	"encoding/json"
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
	text := deployText(t)
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

// outsideCodeSpans is md with its CommonMark code spans left out: a run of
// n backticks opens a span that the next run of exactly n closes.
func outsideCodeSpans(md string) string {
	var b strings.Builder
	for i := 0; i < len(md); {
		if md[i] != '`' {
			b.WriteByte(md[i])
			i++
			continue
		}
		n := 0
		for i+n < len(md) && md[i+n] == '`' {
			n++
		}
		closeAt := -1
		for j := i + n; j < len(md); {
			if md[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(md) && md[j+m] == '`' {
				m++
			}
			if m == n {
				closeAt = j + m
				break
			}
			j += m
		}
		if closeAt < 0 { // no closing run: the backticks are text
			b.WriteString(md[i : i+n])
			i += n
			continue
		}
		i = closeAt
	}
	return b.String()
}

// TestProvenanceIsNotMarkdown: the provenance the runtime gave a record
// (its conversation and run ids, which may hold any printable character,
// backticks included) shows as code in the hover and the tooltip, and makes
// no Markdown of its own there: a conversation id "c` ![x](https://...) `"
// closed the code span it was put in and the editor fetched the image.
func TestProvenanceIsNotMarkdown(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	text := deployText(t)
	path := env.write(t, "deploy.agent.yaml", text)
	const conv = "c1` ![x](https://attacker.example/beacon.png) <img src=x> [docs](https://attacker.example) `"
	agentSave(t, env, text, "Deploys go out Tuesdays", "background.projectContext.deploy_window", conv)
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
	c.initialize(env.root, nil, false)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	h := hintWith(c.hints(uri), "Deploys go out")
	if h == nil || h.Tooltip == nil {
		t.Fatalf("no memory hint with a tooltip: %+v", h)
	}
	var hv struct {
		Contents MarkupContent `json:"contents"`
	}
	c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": h.Position}, &hv)
	for what, md := range map[string]string{"tooltip": h.Tooltip.Value, "hover": hv.Contents.Value} {
		if !strings.Contains(md, "attacker.example/beacon.png") {
			t.Errorf("%s lacks the conversation id:\n%s", what, md)
		}
		text := outsideCodeSpans(md)
		for _, bad := range []string{"![x](", "](https://", "<img"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s: the conversation id's Markdown %q came out of its code span:\n%s", what, bad, md)
			}
		}
	}
}
