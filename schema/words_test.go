package schema

import "testing"

func TestCountAndArticle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int
		word string
		want string
	}{
		{0, "distinct conversation", "0 distinct conversations"},
		{1, "distinct conversation", "1 distinct conversation"},
		{2, "pending review", "2 pending reviews"},
		{3, "ledger entry", "3 ledger entries"},
		{2, "day", "2 days"},
	} {
		if got := Count(tc.n, tc.word); got != tc.want {
			t.Errorf("Count(%d, %q) = %q, want %q", tc.n, tc.word, got, tc.want)
		}
	}
	for word, want := range map[string]string{"example": "an", "awareness": "an", "judgment": "a", "background": "a"} {
		if got := Article(word); got != want {
			t.Errorf("Article(%q) = %q, want %q", word, got, want)
		}
	}
}

// TestConversations: the one phrase of a count of distinct conversations.
func TestConversations(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0 conversations", 1: "1 conversation", 2: "2 conversations"} {
		if got := Conversations(n); got != want {
			t.Errorf("Conversations(%d) = %q, want %q", n, got, want)
		}
	}
	if got := ConversationsOf(1, 2); got != "1 of 2 conversations" {
		t.Errorf("ConversationsOf(1, 2) = %q", got)
	}
	if got := ConversationsOf(0, 1); got != "0 of 1 conversation" {
		t.Errorf("ConversationsOf(0, 1) = %q", got)
	}
}
