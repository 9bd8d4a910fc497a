package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-ls/agent-ls/engine"
)

// listTools returns tools/list's tools by name, their schemas as generic JSON.
func (f *fixture) listTools() map[string]*mcp.Tool {
	f.t.Helper()
	res, err := f.client.ListTools(context.Background(), nil)
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

func asJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return m
}

// schemaProblems walks a JSON Schema and reports what the MCP Inspector's
// strict check objects to: a type array (["null","array"]) and a bare
// boolean schema where an object is expected.
func schemaProblems(path string, v any) []string {
	s, ok := v.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s: a bare %v schema", path, v)}
	}
	var out []string
	if _, ok := s["type"].([]any); ok {
		out = append(out, fmt.Sprintf("%s: type %v", path, s["type"]))
	}
	for _, key := range []string{"properties", "$defs", "patternProperties"} {
		m, _ := s[key].(map[string]any)
		for name, sub := range m {
			out = append(out, schemaProblems(path+"."+key+"."+name, sub)...)
		}
	}
	for _, key := range []string{"items", "additionalProperties", "not"} {
		if sub, ok := s[key]; ok {
			if b, isBool := sub.(bool); isBool && key == "additionalProperties" && !b {
				continue // additionalProperties: false is a closed object, not a bare schema
			}
			if key == "not" {
				continue
			}
			out = append(out, schemaProblems(path+"."+key, sub)...)
		}
	}
	for _, key := range []string{"oneOf", "anyOf", "allOf"} {
		l, _ := s[key].([]any)
		for i, sub := range l {
			out = append(out, schemaProblems(fmt.Sprintf("%s.%s[%d]", path, key, i), sub)...)
		}
	}
	return out
}

func strs(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

func prop(s map[string]any, path ...string) map[string]any {
	for _, p := range path {
		props, _ := s["properties"].(map[string]any)
		s, _ = props[p].(map[string]any)
	}
	return s
}

// TestToolSchemas: issue 32, "MCP that a model can use first time". tools/list
// has no ["null", ...] types and no bare true schemas in any tool's input or
// output; kind and kinds are enums; target enumerates the bound agent's
// targets and none that is locked; payload is one of the example and
// awareness payloads; the annotations say what each tool does.
func TestToolSchemas(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tools := f.listTools()
	if len(tools) != 6 {
		t.Fatalf("tools/list has %d tools, want 6", len(tools))
	}
	kinds := []string{"fact", "preference", "episode", "profile"}
	for name, tl := range tools {
		for which, sch := range map[string]any{"inputSchema": tl.InputSchema, "outputSchema": tl.OutputSchema} {
			for _, p := range schemaProblems(name+"."+which, asJSON(t, sch)) {
				t.Error(p)
			}
		}
		if tl.Annotations == nil {
			t.Errorf("%s has no annotations", name)
		}
	}
	for _, name := range []string{ToolSearch, ToolList} {
		if got := strs(prop(asJSON(t, tools[name].InputSchema), "kinds")["items"].(map[string]any)["enum"]); !slices.Equal(got, kinds) {
			t.Errorf("%s kinds items enum = %v, want %v", name, got, kinds)
		}
	}

	in := asJSON(t, tools[ToolSave].InputSchema)
	if got := strs(prop(in, "kind")["enum"]); !slices.Equal(got, kinds) {
		t.Errorf("memory_save kind enum = %v, want %v", got, kinds)
	}
	target := prop(in, "target")
	branches, _ := target["oneOf"].([]any)
	var enum, primitives []string
	pattern := ""
	for _, b := range branches {
		b := b.(map[string]any)
		switch b["type"] {
		case "string":
			if e, ok := b["enum"]; ok {
				enum = strs(e)
			} else {
				pattern, _ = b["pattern"].(string)
			}
		case "object":
			primitives = append(primitives, fmt.Sprint(prop(b, "primitive")["const"]))
		}
	}
	want := []string{"judgment.refunds.heuristics", "judgment.refunds.constraints", "judgment.refunds.escalationTriggers", "example.refunds",
		"judgment.order-status.heuristics", "judgment.order-status.constraints", "judgment.order-status.escalationTriggers", "example.order-status",
		"awareness", "recovery"}
	if !slices.Equal(enum, want) {
		t.Errorf("target enum = %v, want %v", enum, want)
	}
	if !strings.HasPrefix(pattern, `^background\.(teamContext|projectContext|conventions|currentState)\.`) {
		t.Errorf("background target pattern = %q", pattern)
	}
	if got := []string{"background", "judgment", "example", "awareness", "recovery"}; !slices.Equal(primitives, got) {
		t.Errorf("target object branches = %v, want %v (manual is locked)", primitives, got)
	}
	payload, _ := prop(in, "payload")["oneOf"].([]any)
	var required [][]string
	for _, p := range payload {
		required = append(required, strs(p.(map[string]any)["required"]))
	}
	if len(required) != 2 || !slices.Equal(required[0], []string{"scenario", "good"}) ||
		!slices.Equal(required[1], []string{"name", "description", "accessMethod"}) {
		t.Errorf("payload oneOf requires %v, want the example and awareness payloads", required)
	}

	yes, no := true, false
	for _, c := range []struct {
		tool                  string
		readOnly              bool
		destructive           *bool
		idempotent, openWorld bool
	}{
		{ToolSave, false, &yes, false, false},
		{ToolInvalidate, false, &yes, true, false},
		{ToolCompose, false, &no, false, false},
		{ToolSearch, true, nil, false, false},
		{ToolList, true, nil, false, false},
		{ToolLearnings, true, nil, false, false},
	} {
		a := tools[c.tool].Annotations
		if a.ReadOnlyHint != c.readOnly || (c.destructive != nil && (a.DestructiveHint == nil || *a.DestructiveHint != *c.destructive)) ||
			a.IdempotentHint != c.idempotent || a.OpenWorldHint == nil || *a.OpenWorldHint != c.openWorld {
			t.Errorf("%s annotations = %+v", c.tool, asJSON(t, a))
		}
	}
}

// TestSaveEveryAdvertisedTarget: a model that picks any target of the enum
// (with the payload its primitive needs) gets it saved, never refused, and a
// locked or unknown target the schema leaves out is still the handler's to
// answer (refused with guidance, not a schema error).
func TestSaveEveryAdvertisedTarget(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg, err := f.srv.loadAgent()
	if err != nil {
		t.Fatal(err)
	}
	for i, target := range append(advertisedTargets(cfg), "background.projectContext.warehouse") {
		args := map[string]any{"content": fmt.Sprintf("Lesson %d for %s", i, target), "target": target}
		switch {
		case strings.HasPrefix(target, "example."):
			args["payload"] = map[string]any{"scenario": "A customer asks twice", "good": "Answer once, fully"}
		case target == "awareness":
			args["payload"] = map[string]any{"name": "orders-db", "description": "every order", "accessMethod": "the lookup_order tool"}
		}
		var out SaveOutput
		f.call(ToolSave, args, &out)
		if out.Status != string(engine.SaveSaved) {
			t.Errorf("save to advertised target %s = %+v", target, out)
		}
	}
	var out SaveOutput
	f.call(ToolSave, map[string]any{"content": "Always call issue_refund twice", "target": "manual.issue_refund.workflows"}, &out)
	if out.Status != string(engine.SaveRefused) || out.Guidance == "" {
		t.Errorf("locked target = %+v, want refused with guidance", out)
	}
}

// TestSaveSchemaFollowsAgentFile: the agent file is re-read per call, and
// tools/list follows it: a judgment domain added while the server runs is
// in the next listing's target enum.
func TestSaveSchemaFollowsAgentFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	file := filepath.Join(f.dir, "support.agent.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "  judgments:\n", "  judgments:\n    - domain: gifting\n      heuristics:\n        - Offer gift wrap at checkout\n", 1)
	if edited == string(data) {
		t.Fatal("the fixture's agent file has no judgments list")
	}
	if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	in := asJSON(t, f.listTools()[ToolSave].InputSchema)
	enum := strs(prop(in, "target")["oneOf"].([]any)[0].(map[string]any)["enum"])
	if !slices.Contains(enum, "judgment.gifting.heuristics") || !slices.Contains(enum, "example.gifting") {
		t.Errorf("after adding domain gifting, target enum = %v", enum)
	}
}
