package schema

import "testing"

func TestCheckRecord(t *testing.T) {
	t.Parallel()
	ok := func() MemoryRecord {
		return MemoryRecord{ID: "r1", Content: "Refunds über 100 € need\ta manager.\n", Scope: map[string]string{"project": "p", "team": "t"}, Tags: []string{"a", "b"},
			Supports: []Support{{ConversationID: "c1", RunID: "run"}}}
	}
	tests := []struct {
		name string
		edit func(*MemoryRecord)
		want string // "" for no error
	}{
		{"valid", func(*MemoryRecord) {}, ""},
		{"NUL in content", func(r *MemoryRecord) { r.Content = "a\x00b" }, "content: control character U+0000 at byte 1 (only newline and tab are allowed)"},
		{"DEL in content", func(r *MemoryRecord) { r.Content = "ab\x7f" }, "content: control character U+007F at byte 2 (only newline and tab are allowed)"},
		{"C1 after non-ASCII", func(r *MemoryRecord) { r.Content = "é\u0085" }, "content: control character U+0085 at byte 2 (only newline and tab are allowed)"},
		{"control after non-ASCII", func(r *MemoryRecord) { r.Content = "€x\x01" }, "content: control character U+0001 at byte 4 (only newline and tab are allowed)"},
		{"invalid UTF-8", func(r *MemoryRecord) { r.Content = "a\xffb" }, "content: not valid UTF-8"},
		{"newline in a scope value", func(r *MemoryRecord) { r.Scope["team"] = "a\nb" }, `scope."team": control character U+000A at byte 1`},
		{"first bad scope pair in key order", func(r *MemoryRecord) { r.Scope["team"] = "\x02"; r.Scope["project"] = "\x01" }, `scope."project": control character U+0001 at byte 0`},
		{"bad scope key", func(r *MemoryRecord) { r.Scope["a\tb"] = "x" }, `scope key "a\tb": control character U+0009 at byte 1`},
		{"tab in a tag", func(r *MemoryRecord) { r.Tags = []string{"ok", "x\ty"} }, "tags[1]: control character U+0009 at byte 1"},
		{"support run id", func(r *MemoryRecord) { r.Supports = append(r.Supports, Support{ConversationID: "c2", RunID: "\x1b"}) }, "supports[1].runId: control character U+001B at byte 0"},
		{"support conversation id", func(r *MemoryRecord) { r.Supports[0].ConversationID = "c\x00" }, "supports[0].conversationId: control character U+0000 at byte 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := ok()
			tt.edit(&r)
			err := Limits{}.CheckRecord(&r)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("CheckRecord:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
