package schema

import "testing"

func TestNormalizeConversationID(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in, want string
		bad      bool
	}{
		{in: "c1", want: "c1"},
		{in: "C1", want: "c1"},
		{in: "c1 ", want: "c1"},
		{in: "\u00a0 C1\u3000", want: "c1"},
		{in: "Cafe\u0301", want: "caf\u00e9"}, // NFD -> NFC
		{in: "CAF\u00c9", want: "caf\u00e9"},
		{in: "Straße", want: "strasse"},
		{in: "", want: ""},
		{in: "c1\n", bad: true},
		{in: "c\x001", bad: true},
		{in: "c1\t", bad: true},
		{in: "c\u00851", bad: true},
		{in: "c1\u200b", bad: true}, // zero-width space: a visibly identical, distinct id
		{in: "\ufeffc1", bad: true}, // byte order mark
		{in: "c\u202e1", bad: true}, // bidi override
		{in: "c\u20281", bad: true}, // line separator
	} {
		got, err := NormalizeConversationID(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("NormalizeConversationID(%q) = %q, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("NormalizeConversationID(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestDistinctConversationsNormalized(t *testing.T) {
	t.Parallel()
	r := MemoryRecord{Provenance: Provenance{ConversationID: "c1"}, Supports: []Support{{ConversationID: "C1"}, {ConversationID: "c1 "}, {ConversationID: "c2"}}}
	if n := r.DistinctConversations(); n != 2 {
		t.Errorf("DistinctConversations = %d, want 2", n)
	}
}
