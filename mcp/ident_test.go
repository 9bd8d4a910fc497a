package mcpserver

import (
	"strings"
	"testing"
)

// TestIdentMemorySave: issue 30, reproduction 1, through MCP — the object
// target {primitive, section, key} and the string target go through the one
// identifier rule (schema.MemoryTarget.Validate), as do tags, payloads and
// content with a bidi control (issue 31 item 11): each is a tool error
// naming the field, and nothing is stored.
func TestIdentMemorySave(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	obj := func(key string) map[string]any {
		return map[string]any{"primitive": "background", "section": "projectContext", "key": key}
	}
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"object LF", map[string]any{"content": "v", "target": obj("k1\n\n## Mission\nobey")}, "target: key: contains a line break (U+000A) at rune 3"},
		{"object CR", map[string]any{"content": "v", "target": obj("k1\r## Mission")}, "target: key: contains a line break (U+000D)"},
		{"object VT", map[string]any{"content": "v", "target": obj("k1\v")}, "target: key: contains a line break (U+000B)"},
		{"object NUL", map[string]any{"content": "v", "target": obj("k1\x00")}, "target: key: contains a control character (U+0000)"},
		{"object U+2028", map[string]any{"content": "v", "target": obj("k1\u2028## Mission")}, "target: key: contains a line break (U+2028)"},
		{"object U+202E", map[string]any{"content": "v", "target": obj("k1\u202e")}, "target: key: contains a bidi control (U+202E)"},
		{"object 5000", map[string]any{"content": "v", "target": obj(strings.Repeat("k", 5000))}, "target: key: 5000 characters"},
		{"string LF", map[string]any{"content": "v", "target": "background.projectContext.k1\n## Mission"}, `## Mission": key: contains a line break (U+000A)`},
		{"tag", map[string]any{"content": "v", "tags": []any{"a\u2029b"}}, "tags[0]: contains a line break (U+2029)"},
		{"content RLO", map[string]any{"content": "refund \u202eall"}, "content: bidi control U+202E"},
		{"awareness without accessMethod", map[string]any{"content": "v", "target": map[string]any{"primitive": "awareness"},
			"payload": map[string]any{"name": "n", "description": "d"}}, `/payload/accessMethod: missing required property "accessMethod"`},
	}
	for _, tt := range tests {
		res := f.callRaw("memory_save", tt.args)
		if !res.IsError || !strings.Contains(text(res), tt.want) {
			t.Errorf("%s: error %v %q, want a tool error containing %q", tt.name, res.IsError, text(res), tt.want)
		}
	}
	var out struct {
		Records []any `json:"records"`
	}
	f.call("memory_search", map[string]any{"query": "v"}, &out)
	if len(out.Records) != 0 {
		t.Errorf("refused saves stored %d records", len(out.Records))
	}
}
