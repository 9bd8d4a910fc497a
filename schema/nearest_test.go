package schema

import "testing"

func TestNearestName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key   string
		names []string
		want  string
		ok    bool
	}{
		{"judgements", []string{"judgments", "name", "persona"}, "judgments", true},
		{"Persona", []string{"persona", "tone"}, "persona", true},
		{"cat", []string{"bat", "hat"}, "", false},      // two equally near: ambiguous
		{"zzzzzz", []string{"name", "tone"}, "", false}, // nothing near
		{"tne", []string{"tone", "name", "source"}, "tone", true},
		{"suport-bot", []string{"support-bot", "triage", "support-bot"}, "support-bot", true}, // a name listed twice is one name
	}
	for _, tt := range tests {
		got, ok := NearestName(tt.key, tt.names)
		if got != tt.want || ok != tt.ok {
			t.Errorf("NearestName(%q, %v) = %q, %v; want %q, %v", tt.key, tt.names, got, ok, tt.want, tt.ok)
		}
	}
}
