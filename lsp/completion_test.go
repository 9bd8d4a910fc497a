package lsp

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/schema"
)

// cursorText splits text at its "|" marker into the text and the position.
func cursorText(t *testing.T, marked string) (string, protocol.Position) {
	t.Helper()
	i := strings.Index(marked, "|")
	if i < 0 {
		t.Fatal("no | cursor marker")
	}
	before := marked[:i]
	line := strings.Count(before, "\n")
	col := len(before) - strings.LastIndex(before, "\n") - 1
	return before + marked[i+1:], protocol.Position{Line: uint32(line), Character: uint32(col)}
}

const completionAgent = `roleTemplate:
  name: r
  persona:
    identity: i
    tone: t
  judgments:
    - domain: code-review
      heuristics:
        - h
    - domain: style
      %s
mission:
  objective: o
`

// TestCompletion asks the real server for completions at a cursor and checks
// the labels offered (and some that must not be), with details.
func TestCompletion(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true})
	c.initialize(env.root, nil, false)
	tests := []struct {
		name, file, text string
		want, notWant    []string
		detail           map[string]string // label -> detail
		newText          map[string]string // label -> edit text
	}{
		{name: "judgment keys while unparsable", file: "a.agent.yaml",
			text: strings.Replace(completionAgent, "%s", "heuristics: [x]\n      con|", 1),
			want: []string{"constraints", "escalationTriggers", "examples"}, notWant: []string{"domain", "heuristics", "identity"},
			newText: map[string]string{"constraints": "constraints: "}},
		{name: "root keys with required", file: "a.agent.yaml", text: "roleTemplate:\n  name: r\n|",
			want: []string{"mission", "background", "awareness"}, notWant: []string{"roleTemplate"},
			detail: map[string]string{"mission": "required"}},
		{name: "persona keys", file: "a.agent.yaml", text: "roleTemplate:\n  persona:\n    identity: x\n    |\n",
			want: []string{"tone", "priorities", "principles"}, notWant: []string{"identity", "name"}},
		{name: "example keys in a new item", file: "a.agent.yaml",
			text: strings.Replace(completionAgent, "%s", "examples:\n        - |", 1),
			want: []string{"scenario", "good", "bad", "reasoning", "new example"}},
		{name: "judgment snippet on a bare line", file: "a.agent.yaml",
			text: "roleTemplate:\n  judgments:\n    |\n", want: []string{"new judgment"},
			newText: map[string]string{"new judgment": "- domain: ${1:domain}\n      heuristics:\n        - ${2:heuristic}\n" +
				"      constraints:\n        - ${3:constraint}\n      escalationTriggers:\n        - ${4:trigger}"}},
		{name: "awareness snippet", file: "a.agent.yaml",
			text: "awareness:\n  domains:\n    - |\n", want: []string{"new awareness domain", "name", "description", "accessMethod"}},
		{name: "responsibility snippet", file: "a.agent.yaml",
			text: "roleTemplate:\n  responsibilities:\n    |\n", want: []string{"new responsibility"}},
		{name: "source enum", file: "a.agent.yaml", text: "roleTemplate:\n  source: |\n", want: []string{"library", "custom"}},
		{name: "target enums", file: "r.memory.yaml", text: "target:\n  primitive: |\n",
			want: []string{"background", "judgment", "example", "awareness", "recovery", "manual"}},
		{name: "kind enum", file: "r.memory.yaml", text: "kind: |\n", want: []string{"fact", "preference", "episode", "profile"}},
		{name: "slot enum", file: "r.memory.yaml", text: "target:\n  slot: esc|\n", want: []string{"heuristics", "escalationTriggers"}},
		{name: "section enum", file: "r.memory.yaml", text: "target:\n  section: |\n", want: []string{"teamContext", "currentState"}},
		{name: "target domain names the agents' judgments", file: "t.memory.yaml", text: "target:\n  primitive: judgment\n  domain: |\n",
			want: []string{"code-review", "style"}},
		{name: "a judgment's own domain gets no domain list", file: "a.agent.yaml",
			text: strings.Replace(completionAgent, "    - domain: style\n      %s", "    - domain: |", 1), notWant: []string{"code-review"}},
		{name: "json keys while unparsable: trailing quote", file: "k1.agent.json",
			text: `{"roleTemplate": {"name": "r", "persona": {"identity": "i", "|`,
			want: []string{"tone", "priorities", "principles"}, notWant: []string{"identity", "name", "new judgment"},
			newText: map[string]string{"tone": `"tone"`}},
		{name: "json keys while unparsable: missing comma earlier", file: "k2.agent.json",
			text: `{"roleTemplate": {"name": "r" "persona": {"identity": "i"}, |`,
			want: []string{"judgments", "recovery"}, notWant: []string{"name", "persona", "identity"}},
		{name: "json key after a value still needs its comma", file: "k3.agent.json",
			text: "{\"mission\": {\"objective\": \"o\" |\n", want: []string{"successCriteria"}, notWant: []string{"objective"},
			newText: map[string]string{"successCriteria": `, "successCriteria"`}},
		{name: "json enum value while unparsable", file: "k4.agent.json", text: `{"roleTemplate": {"source": "|`,
			want: []string{"library", "custom"}, newText: map[string]string{"library": `"library"`}},
		{name: "json keys of the second judgment", file: "k5.agent.json",
			text: `{"roleTemplate": {"judgments": [{"domain": "a"}, {"domain": "b", "he|`,
			want: []string{"heuristics"}, notWant: []string{"domain"}, newText: map[string]string{"heuristics": `"heuristics"`}},
		{name: "json judgment snippet at an item position", file: "k6.agent.json",
			text: `{"roleTemplate": {"judgments": [{"domain": "a"}, |`, want: []string{"new judgment"}, notWant: []string{"domain", "new example"},
			newText: map[string]string{"new judgment": `{"domain": "${1:domain}", "heuristics": ["${2:heuristic}"], "constraints": ["${3:constraint}"], "escalationTriggers": ["${4:trigger}"]}`}},
		{name: "json judgment snippet after an item without its comma", file: "k8.agent.json",
			text: "{\"roleTemplate\": {\"judgments\": [{\"domain\": \"a\"} |\n", want: []string{"new judgment"}, notWant: []string{"domain"},
			newText: map[string]string{"new judgment": `, {"domain": "${1:domain}", "heuristics": ["${2:heuristic}"], "constraints": ["${3:constraint}"], "escalationTriggers": ["${4:trigger}"]}`}},
		{name: "json example snippet", file: "k7.agent.json",
			text: `{"roleTemplate": {"judgments": [{"domain": "a", "examples": [|]}]}}`, want: []string{"new example"}},
		{name: "json keys", file: "j.agent.json", text: `{"roleTemplate": {"name": "r", "persona": {"identity": "i", "|tone": "t"}}}`,
			want: []string{"priorities", "principles"}, notWant: []string{"identity"}},
	}
	// An agent beside the memory files, for the domain list.
	env.write(t, "t.agent.yaml", strings.Replace(completionAgent, "%s", "", 1))
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, pos := cursorText(t, tt.text)
			var uri protocol.DocumentURI
			if strings.Contains(tt.file, ".agent.") {
				uri = c.open(filepath.Join(env.root, tt.file), text, i+1)
			} else { // not an agent file: the server reads it from disk
				uri = pathToURI(env.write(t, tt.file, text))
			}
			var list protocol.CompletionList
			c.call(protocol.MethodTextDocumentCompletion, map[string]any{
				"textDocument": map[string]any{"uri": uri}, "position": pos}, &list)
			got := map[string]protocol.CompletionItem{}
			for _, it := range list.Items {
				got[it.Label] = it
			}
			for _, w := range tt.want {
				if _, ok := got[w]; !ok {
					t.Errorf("missing %q; got %v", w, labels(list.Items))
				}
			}
			for _, w := range tt.notWant {
				if _, ok := got[w]; ok {
					t.Errorf("offered %q, should not; got %v", w, labels(list.Items))
				}
			}
			for l, d := range tt.detail {
				if got[l].Detail != d {
					t.Errorf("%s detail = %q, want %q", l, got[l].Detail, d)
				}
			}
			for l, nt := range tt.newText {
				if got[l].TextEdit == nil || got[l].TextEdit.NewText != nt {
					t.Errorf("%s edit = %+v, want %q", l, got[l].TextEdit, nt)
				}
			}
		})
	}
}

func labels(items []protocol.CompletionItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Label
	}
	return out
}

// TestHoverKeyDescription: hovering an authored key shows the schema's
// description, which says what it means and how it renders.
func TestHoverKeyDescription(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true})
	c.initialize(env.root, nil, false)
	text := strings.Replace(completionAgent, "%s", "heuristics: [x]", 1)
	uri := c.open(filepath.Join(env.root, "h.agent.yaml"), text, 1)
	c.awaitDiagnostics(uri, 1)
	tests := []struct {
		line, char int
		want       string
	}{
		{7, 8, "Rules of thumb for this domain. Render as bullets"}, // heuristics key
		{5, 4, "Decision domains"},                                  // judgments key
		{10, 8, "Rules of thumb"},                                   // heuristics of the second judgment
	}
	for _, tt := range tests {
		var h protocol.Hover
		c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": uri},
			"position": map[string]any{"line": tt.line, "character": tt.char}}, &h)
		if !strings.Contains(h.Contents.Value, tt.want) {
			t.Errorf("hover at %d:%d = %q, want it to contain %q", tt.line+1, tt.char+1, h.Contents.Value, tt.want)
		}
	}
	// A value is not a key: no description.
	var h protocol.Hover
	c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": uri},
		"position": map[string]any{"line": 6, "character": 16}}, &h)
	if strings.Contains(h.Contents.Value, "Decision domains") || strings.Contains(h.Contents.Value, "Rules of thumb") {
		t.Errorf("hover on a value shows a key description: %q", h.Contents.Value)
	}
}

// BenchmarkCompletion: textDocument/completion on the last line of the
// 2,000-line file (the longest walk up to its parent key).
func BenchmarkCompletion(b *testing.B) {
	c, uri, text := benchServer(b)
	last := uint32(strings.Count(text, "\n") - 1)
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		var list protocol.CompletionList
		c.call(protocol.MethodTextDocumentCompletion, map[string]any{"textDocument": map[string]any{"uri": uri},
			"position": protocol.Position{Line: last, Character: 4}}, &list)
		ds = append(ds, time.Since(start))
		if len(list.Items) != 0 {
			b.Fatalf("completion inside a background section offered %v", labels(list.Items))
		}
	}
	reportPercentiles(b, ds)
}

// TestJSONSnippetsAreValid: every JSON snippet, its placeholders at their
// defaults, is a JSON object whose keys the schema allows on the item.
func TestJSONSnippetsAreValid(t *testing.T) {
	t.Parallel()
	placeholder := regexp.MustCompile(`\$\{\d+:([^}]*)\}`)
	items := map[string]string{
		"/roleTemplate/judgments": "/roleTemplate/judgments/0", "examples": "/roleTemplate/judgments/0/examples/0",
		"/awareness/domains": "/awareness/domains/0", "/roleTemplate/responsibilities": "/roleTemplate/responsibilities/0",
	}
	for array, sn := range snippets {
		var obj map[string]any
		if err := json.Unmarshal([]byte(placeholder.ReplaceAllString(sn.json, "$1")), &obj); err != nil {
			t.Errorf("%s: %v in %s", sn.label, err, sn.json)
			continue
		}
		allowed := map[string]bool{}
		for _, p := range schema.AgentProperties(items[array]) {
			allowed[p.Name] = true
		}
		for k := range obj {
			if !allowed[k] {
				t.Errorf("%s: key %q not allowed at %s", sn.label, k, items[array])
			}
		}
	}
}
