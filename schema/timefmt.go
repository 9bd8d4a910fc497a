package schema

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// TimeLayout is the fixed-width RFC 3339 layout of every stored timestamp:
// UTC, millisecond precision, e.g. 2026-11-03T14:05:00.000Z. String order is
// time order.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime renders t in TimeLayout (converted to UTC, truncated to ms).
func FormatTime(t time.Time) string {
	return t.UTC().Truncate(time.Millisecond).Format(TimeLayout)
}

// ParseTime parses a stored timestamp. It accepts TimeLayout and, for user
// input, any RFC 3339 time, which it converts to UTC.
func ParseTime(s string) (time.Time, error) {
	if t, err := time.Parse(TimeLayout, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, &ValueError{Name: "time", Value: s, Why: "want RFC 3339, e.g. 2026-11-03T14:05:00.000Z"}
	}
	return t.UTC(), nil
}

// sinceWant is what ParseSince takes.
const sinceWant = "want a duration such as 7d or 1h, or an RFC 3339 time"

// ParseSince turns a "since" argument into an absolute time: a duration back
// from now ("7d", "36h", "90m", "2w") or an RFC 3339 time.
func ParseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, &ValueError{Name: "since", Why: sinceWant}
	}
	if d, ok := parseLongDuration(s); ok {
		return now.Add(-d).UTC(), nil
	}
	t, err := ParseTime(s)
	if err != nil {
		return time.Time{}, &ValueError{Name: "since", Value: s, Why: sinceWant}
	}
	return t, nil
}

// ParseDuration parses Go durations plus the day and week suffixes d and w.
func ParseDuration(s string) (time.Duration, error) {
	if d, ok := parseLongDuration(s); ok {
		return d, nil
	}
	return 0, &ValueError{Name: "duration", Value: s, Why: "want e.g. 72h, 30m, 7d or 2w"}
}

func parseLongDuration(s string) (time.Duration, bool) {
	if n := len(s); n > 1 && (s[n-1] == 'd' || s[n-1] == 'w') {
		var v int64
		if _, err := fmt.Sscanf(s[:n-1], "%d", &v); err != nil || v < 0 || fmt.Sprint(v) != s[:n-1] {
			return 0, false
		}
		unit := 24 * time.Hour
		if s[n-1] == 'w' {
			unit *= 7
		}
		if v > int64(math.MaxInt64/unit) {
			return 0, false // past time.Duration's range (about 292 years): it would wrap around
		}
		return time.Duration(v) * unit, true
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}

// IDGenerator mints record ids: 26 characters of Crockford base32 holding a
// 48-bit millisecond timestamp and 80 random bits (the ULID layout), so ids
// sort by creation time and are unique across processes. Within one
// generator, ids minted in the same millisecond still increase.
type IDGenerator struct {
	entropy io.Reader
	lastMS  uint64
	lastRnd [10]byte
}

// NewIDGenerator returns a generator reading randomness from entropy
// (crypto/rand when nil).
func NewIDGenerator(entropy io.Reader) *IDGenerator {
	if entropy == nil {
		entropy = rand.Reader
	}
	return &IDGenerator{entropy: entropy}
}

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// New returns a fresh id for time t.
func (g *IDGenerator) New(t time.Time) (string, error) {
	ms := uint64(t.UnixMilli())
	var rnd [10]byte
	if ms <= g.lastMS {
		// Same (or earlier) millisecond: increment the previous randomness.
		ms = g.lastMS
		rnd = g.lastRnd
		for i := len(rnd) - 1; i >= 0; i-- {
			rnd[i]++
			if rnd[i] != 0 {
				break
			}
		}
	} else if _, err := io.ReadFull(g.entropy, rnd[:]); err != nil {
		return "", fmt.Errorf("record id entropy: %w", err)
	}
	g.lastMS, g.lastRnd = ms, rnd
	var b [16]byte
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	copy(b[6:], rnd[:])
	return encodeBase32(b), nil
}

func encodeBase32(b [16]byte) string {
	// 128 bits -> 26 chars; the first char holds the top 3 bits.
	var out [26]byte
	hi := binary.BigEndian.Uint64(b[0:8])
	lo := binary.BigEndian.Uint64(b[8:16])
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// ValidID reports whether s has the shape of a record id.
func ValidID(s string) bool {
	if len(s) != 26 || s[0] > '7' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(crockford, rune(s[i])) {
			return false
		}
	}
	return true
}
