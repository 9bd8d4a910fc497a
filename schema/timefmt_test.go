package schema

import (
	"testing"
	"time"
)

// TestParseDurationOverflow: a day or week count past time.Duration's range
// (about 292 years) is refused; it wrapped around, to a negative duration
// (a "since" in the future) or to an arbitrary positive one (an expiry of
// days for one of centuries).
func TestParseDurationOverflow(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"106752d", "300000d", "15251w", "99999999999999d", "9223372036854775807w"} {
		if d, err := ParseDuration(s); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", s, d)
		}
		if since, err := ParseSince(s, time.Now()); err == nil {
			t.Errorf("ParseSince(%q) = %v, want an error", s, since)
		}
	}
	for s, want := range map[string]time.Duration{"106751d": 106751 * 24 * time.Hour, "15250w": 15250 * 7 * 24 * time.Hour, "7d": 7 * 24 * time.Hour, "36h": 36 * time.Hour} {
		if d, err := ParseDuration(s); err != nil || d != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", s, d, err, want)
		}
	}
}
