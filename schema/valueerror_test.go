package schema

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestNamed: a surface words a parser's error with its own parameter name
// once: a *ValueError's or *LimitError's noun is replaced, any other error
// (one that wraps with context of its own included) is prefixed; the value
// is shown quoted and shortened.
func TestNamed(t *testing.T) {
	t.Parallel()
	_, since := ParseSince("x", time.Now())
	_, target := ParseTarget("judgment.x")
	_, conv := NormalizeConversationID("c\x01")
	_, long := ParseSince(strings.Repeat("y", 1<<20), time.Now())
	cause := errors.New("boom")
	for _, tc := range []struct {
		err        error
		name, want string
	}{
		{since, "--since", `--since "x": want a duration such as 7d or 1h, or an RFC 3339 time`},
		{target, "--target", `--target "judgment.x": want judgment.DOMAIN.SLOT`},
		{conv, "--conversation", `--conversation "c\x01": contains a control character (U+0001) at rune 2`},
		{CheckIdentifier("name", "a\x01"), "--name", `--name: contains a control character (U+0001) at rune 2`},
		{&ValueError{Name: "since", Why: "want a duration"}, "--since", `empty --since: want a duration`},
		{&ValueError{Name: "target", Value: "x", Err: cause}, "target", `target "x": boom`},
		{cause, "--x", `--x: boom`},
	} {
		if got := Named(tc.name, tc.err).Error(); got != tc.want {
			t.Errorf("Named(%q, %v) = %q, want %q", tc.name, tc.err, got, tc.want)
		}
	}
	if got := Named("--since", long).Error(); len(got) > 200 {
		t.Errorf("a 1 MiB value is echoed whole: %d bytes", len(got))
	}
	if Named("x", nil) != nil {
		t.Error("Named(x, nil) is not nil")
	}
	if ve := (&ValueError{Name: "target", Value: "x", Err: cause}); !errors.Is(Named("--target", ve), cause) {
		t.Error("Named loses the cause")
	}
}
