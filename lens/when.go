package lens

import (
	"fmt"
	"time"

	"github.com/agent-ls/agent-ls/schema"
)

// whenView is a stored time as the pages show it: relative to the lens's
// clock (Rel), with the exact UTC time for the datetime attribute and the
// hover (ISO). OK is false when the text is not a time (Raw is shown).
type whenView struct {
	Raw string
	ISO string
	Rel string
	OK  bool
}

// whenOf reads a stored time (RFC 3339) relative to now.
func whenOf(s string, now time.Time) whenView {
	t, err := schema.ParseTime(s)
	if s == "" || err != nil {
		return whenView{Raw: s}
	}
	return whenView{Raw: s, ISO: schema.FormatTime(t), Rel: relTime(t, now), OK: true}
}

// relTime says how long ago (or in how long) t is from now: "just now",
// "5 min ago", "3 h ago", "2 d ago", "in 6 d"; beyond 60 days, the date.
func relTime(t, now time.Time) string {
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	var n int
	var unit string
	switch {
	case d < time.Minute:
		if future {
			return "in a moment"
		}
		return "just now"
	case d < time.Hour:
		n, unit = int(d/time.Minute), "min"
	case d < 24*time.Hour:
		n, unit = int(d/time.Hour), "h"
	case d < 60*24*time.Hour:
		n, unit = int(d/(24*time.Hour)), "d"
	default:
		return "on " + t.UTC().Format(time.DateOnly)
	}
	if future {
		return fmt.Sprintf("in %d %s", n, unit)
	}
	return fmt.Sprintf("%d %s ago", n, unit)
}

// shortIDLen is how many characters of an id the pages show (the full id is
// in the title and the copy button).
const shortIDLen = 8

// shortID is the last shortIDLen characters of id after an ellipsis. The
// end, not the start: ids are ULIDs whose first ten characters are the
// creation time, and one store's ids of one millisecond (a record and its
// proposal, a batch) differ only in their last characters.
func shortID(id string) string {
	if len(id) <= shortIDLen+2 {
		return id
	}
	return "…" + id[len(id)-shortIDLen:]
}
