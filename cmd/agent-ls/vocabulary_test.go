package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
)

// TestConversationsVocabulary: one record learned in two conversations
// reads "2 conversations" — the one phrase, schema.Conversations — on every
// surface: memory show, render --annotate, the inlay hint, the hover and
// the lens's record page; none says "support(s)" or "distinct" for it.
func TestConversationsVocabulary(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	eng := w.engine(agentA, nil)
	const content = "Pause the rollout when the worker queue depth doubles"
	first := w.save(eng, content, "judgment.deploy.heuristics", "conv-1", "")
	second := w.save(eng, content, "judgment.deploy.heuristics", "conv-2", "")
	id := first.Record.ID
	if second.Record.ID != id || second.State != "promoted" {
		t.Fatalf("second save: %+v, want the record %s promoted", second, id)
	}
	phrase := schema.Conversations(2)
	if phrase != "2 conversations" || schema.Conversations(1) != "1 conversation" {
		t.Fatalf("Conversations(2) = %q, Conversations(1) = %q", phrase, schema.Conversations(1))
	}
	bad := []string{"support)", "supports", "1 support", "distinct", "conversation(s)", "2 conversation "}
	check := func(surface, text string) {
		t.Helper()
		if !strings.Contains(text, phrase) {
			t.Errorf("%s does not say %q:\n%s", surface, phrase, text)
		}
		for _, b := range bad {
			if strings.Contains(text, b) {
				t.Errorf("%s says %q:\n%s", surface, b, text)
			}
		}
	}

	show := w.cli("memory", "show", id)
	wantCode(t, show, 0, "memory show")
	check("memory show", show.stdout)
	render := w.cli("render", "deploy.agent.yaml", "--annotate")
	wantCode(t, render, 0, "render --annotate")
	check("render --annotate", lineWith(render.stdout, content))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, c := startServe(ctx, t, w.dir, testLog{t}, "--no-watch")
	defer func() {
		c.call("shutdown", nil)
		c.notify("exit", nil)
		c.w.Close()
		_ = cmd.Wait()
	}()
	path := filepath.Join(w.dir, "deploy.agent.yaml")
	uri := lspOpen(t, c, w.dir, path, "")
	hints := c.callAnswer("textDocument/inlayHint", map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 9999, "character": 0}}})
	if hints.refused {
		t.Fatalf("inlayHint: %s", hints.text)
	}
	check("inlay hint", labelWith(t, hints.text, content))
	line := -1
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(src), "\n") {
		if strings.TrimSpace(l) == "heuristics:" {
			line = i
			break
		}
	}
	hover := c.callAnswer("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri},
		"position": map[string]any{"line": line, "character": 8}})
	if hover.refused {
		t.Fatalf("hover: %s", hover.text)
	}
	check("hover", hover.text)

	ts, client, _ := lensOver(t, w.dir, storeFlags{lockTimeout: 5 * time.Second})
	code, page := get(t, client, ts.URL+"/record/"+id)
	if code != 200 {
		t.Fatalf("lens record page: %d", code)
	}
	check("lens record page", page)
}

// lineWith is the first line of text containing s.
func lineWith(text, s string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// labelWith is the inlay hint label (in the raw JSON answer) containing s.
func labelWith(t *testing.T, raw, s string) string {
	t.Helper()
	i := strings.Index(raw, s)
	if i < 0 {
		t.Fatalf("no inlay hint with %q in %s", s, raw)
	}
	end := strings.Index(raw[i:], `"`)
	return raw[i : i+end]
}
