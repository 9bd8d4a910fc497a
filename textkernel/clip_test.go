package textkernel

import (
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"a  b\n\tc", 10, "a b c"},
		{"abcdef", 4, "abc…"},
		{"abcd", 4, "abcd"},
		{"ééééé", 3, "éé…"},
		{"日本語のテキスト", 4, "日本語…"},
		{"x", 0, ""},
		{"xy", 1, "…"},
	} {
		got := Clip(tt.in, tt.n)
		if got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q is not valid UTF-8", tt.in, tt.n, got)
		}
	}
}
