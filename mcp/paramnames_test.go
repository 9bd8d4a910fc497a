package mcpserver

import (
	"strings"
	"testing"
)

// TestToolErrorsNameTheirParams: a tool's error for bad input names the
// tool's own parameter (and the _meta key of the runtime's provenance),
// never a command-line flag of agent-ls: compose with a malformed at
// answered `--at: time "yesterday": ...`, the CLI's wording, from the
// composition layer.
func TestToolErrorsNameTheirParams(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, tc := range []struct {
		tool string
		args map[string]any
		meta map[string]any
		want string
	}{
		{ToolCompose, map[string]any{"at": "yesterday"}, nil, `at "yesterday": want RFC 3339`},
		{ToolCompose, map[string]any{"at": "2026-13-01T00:00:00Z"}, nil, `at "2026-13-01T00:00:00Z"`},
		{ToolLearnings, map[string]any{"since": "last tuesday"}, nil, `since "last tuesday": want a duration`},
		{ToolList, map[string]any{"limit": -2}, nil, "limit -2"},
		{ToolSearch, map[string]any{"query": "x", "limit": -3}, nil, "limit"},
		{ToolSave, map[string]any{"content": "x", "expires": "soon"}, nil, "expires"},
		{ToolSave, map[string]any{"content": "x", "target": "judgment.nope"}, nil, `target "judgment.nope": want judgment.DOMAIN.SLOT`},
		{ToolSave, map[string]any{"content": "x"}, map[string]any{MetaConversationID: "c\u0000"}, MetaConversationID},
		{ToolSave, map[string]any{"content": "x"}, map[string]any{MetaConversationID: "c1", MetaRunID: "r\u001b[2J"}, `_meta "` + MetaRunID + `": run id: control character U+001B`},
		{ToolInvalidate, map[string]any{"id": "x", "reason": "   "}, nil, "reason"},
		// A reason is one line of text: an escape sequence is refused, not stored
		// for a human's terminal.
		{ToolInvalidate, map[string]any{"id": "01JB0000000000000000000015", "reason": "gone\u001b[2J"}, nil, "reason: control character U+001B"},
	} {
		res := f.callMeta(tc.tool, tc.args, tc.meta)
		got := text(res)
		if !res.IsError || !strings.Contains(got, tc.want) {
			t.Errorf("%s %v: isError=%v %q; want a tool error naming %q", tc.tool, tc.args, res.IsError, got, tc.want)
		}
		if strings.Contains(got, "--") {
			t.Errorf("%s %v: %q names a command-line flag", tc.tool, tc.args, got)
		}
		// Once: `since: since "x"` named the parameter twice.
		for _, p := range []string{"since", "target", "at"} {
			if strings.Contains(got, p+": "+p+" ") {
				t.Errorf("%s %v: %q names %s twice", tc.tool, tc.args, got, p)
			}
		}
	}
}
