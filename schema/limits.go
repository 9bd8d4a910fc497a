package schema

import (
	"fmt"
	"maps"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/agent-ls/agent-ls/textkernel"
)

// Limits bound what one memory may carry (the `limits:` key of
// .agent-ls.yaml). Sizes are bytes of UTF-8; zero means the default.
// Content is data, never structure: besides the sizes, content carries no
// control characters but newline and tab, and no other field carries any.
type Limits struct {
	// Content is the most bytes of a record's content (default 64 KiB).
	Content int `json:"content,omitempty"`
	// Payload is the most bytes of a record's payload JSON (default 64 KiB).
	Payload int `json:"payload,omitempty"`
	// ScopeKey and ScopeValue bound each scope pair; ScopePairs their number.
	ScopeKey   int `json:"scopeKey,omitempty"`
	ScopeValue int `json:"scopeValue,omitempty"`
	ScopePairs int `json:"scopePairs,omitempty"`
	// Tag bounds each tag, Tags their number.
	Tag  int `json:"tag,omitempty"`
	Tags int `json:"tags,omitempty"`
	// ID bounds ids: record ids, supersedes, conversation and run ids,
	// authors.
	ID int `json:"id,omitempty"`
}

// DefaultLimits are the limits of a workspace that sets none.
var DefaultLimits = Limits{Content: 64 << 10, Payload: 64 << 10, ScopeKey: 128, ScopeValue: 512, ScopePairs: 32,
	Tag: 128, Tags: 64, ID: 256}

// MaxLimits are the largest values `limits:` may set; the store refuses
// anything larger whatever the configuration says.
var MaxLimits = Limits{Content: 4 << 20, Payload: 4 << 20, ScopeKey: 1024, ScopeValue: 4096, ScopePairs: 256,
	Tag: 1024, Tags: 1024, ID: 1024}

// MaxIdentifierRunes bounds every identifier (CheckIdentifier): a background
// key, judgment domain, capability, awareness name, agent name, tag, scope
// key or value. It is in characters (runes), not bytes, and not
// configurable: the byte limits of tags and scope pairs (Limits.Tag,
// ScopeKey, ScopeValue) apply as well.
const MaxIdentifierRunes = 256

// WithDefaults returns l with every unset limit at its default.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits
	for _, f := range []struct {
		v   *int
		def int
	}{
		{&l.Content, d.Content}, {&l.Payload, d.Payload}, {&l.ScopeKey, d.ScopeKey}, {&l.ScopeValue, d.ScopeValue},
		{&l.ScopePairs, d.ScopePairs}, {&l.Tag, d.Tag}, {&l.Tags, d.Tags}, {&l.ID, d.ID},
	} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	return l
}

// LimitError names the field of a memory that breaks a limit or carries a
// forbidden character, and why.
type LimitError struct {
	Field  string
	Reason string
}

func (e *LimitError) Error() string { return e.Field + ": " + e.Reason }

// CheckText checks one text field: valid UTF-8, at most max bytes, no
// control characters (multiline allows newline and tab) and no bidi
// controls (IsBidiControl: text must display in the order it is read; zero
// width joiners, which scripts need, stay). key names the `limits:` key that
// sets max, for the message.
func CheckText(field, s string, max int, key string, multiline bool) error {
	if len(s) > max {
		return &LimitError{Field: field, Reason: fmt.Sprintf("%d bytes, more than the limit of %d (limits.%s in %s)", len(s), max, key, WorkspaceConfigName)}
	}
	if !utf8.ValidString(s) {
		return &LimitError{Field: field, Reason: "not valid UTF-8"}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return checkControls(field, s, i, multiline)
		}
		if (c < 0x20 || c == 0x7f) && !(multiline && (c == '\n' || c == '\t')) {
			return controlError(field, rune(c), i, multiline)
		}
	}
	return nil
}

// checkControls is CheckText's loop from byte i on, once s is past ASCII.
func checkControls(field, s string, from int, multiline bool) error {
	for i, r := range s[from:] {
		if multiline && (r == '\n' || r == '\t') {
			continue
		}
		if unicode.IsControl(r) {
			return controlError(field, r, from+i, multiline)
		}
		if IsBidiControl(r) {
			return &LimitError{Field: field, Reason: fmt.Sprintf("bidi control %U at byte %d (text must display in the order it is read)", r, from+i)}
		}
	}
	return nil
}

func controlError(field string, r rune, at int, multiline bool) error {
	why := ""
	if multiline {
		why = " (only newline and tab are allowed)"
	}
	return &LimitError{Field: field, Reason: fmt.Sprintf("control character %U at byte %d%s", r, at, why)}
}

// CheckReason checks the reason an actor gives for a change (an
// invalidation, a demotion, a decision on a proposal): untrusted text that
// surfaces print on one line, so it is one line of at most l.Content bytes
// with no control character (not even newline or tab) and no bidi control.
func (l Limits) CheckReason(field, s string) error {
	l = l.WithDefaults()
	return CheckText(field, s, l.Content, "content", false)
}

// CheckID checks an id-like field (record, conversation and run ids,
// supersedes, authors): at most l.ID bytes, no control characters.
func (l Limits) CheckID(field, s string) error {
	l = l.WithDefaults()
	return CheckText(field, s, l.ID, "id", false)
}

// CheckRecord checks every bounded field of a memory about to be stored:
// content, payload, scope, tags, id, supersededBy, provenance, invalidReason
// and supports.
// The first field out of bounds is a *LimitError.
func (l Limits) CheckRecord(r *MemoryRecord) error {
	l = l.WithDefaults()
	if err := CheckText("content", r.Content, l.Content, "content", true); err != nil {
		return err
	}
	if len(r.Payload) > l.Payload {
		return &LimitError{Field: "payload", Reason: fmt.Sprintf("%d bytes, more than the limit of %d (limits.payload in %s)", len(r.Payload), l.Payload, WorkspaceConfigName)}
	}
	if len(r.Scope) > l.ScopePairs {
		return &LimitError{Field: "scope", Reason: fmt.Sprintf("%d pairs, more than the limit of %d (limits.scopePairs in %s)", len(r.Scope), l.ScopePairs, WorkspaceConfigName)}
	}
	// Field names are built only for the error: the checks run on every
	// write. The first bad pair in key order is the one reported.
	bad := false
	for k, v := range r.Scope {
		if CheckText("", k, l.ScopeKey, "scopeKey", false) != nil || CheckText("", v, l.ScopeValue, "scopeValue", false) != nil {
			bad = true
			break
		}
	}
	if bad {
		for _, k := range slices.Sorted(maps.Keys(r.Scope)) {
			if err := CheckText("scope key "+quoteShort(k), k, l.ScopeKey, "scopeKey", false); err != nil {
				return err
			}
			if err := CheckText("scope."+quoteShort(k), r.Scope[k], l.ScopeValue, "scopeValue", false); err != nil {
				return err
			}
		}
	}
	if len(r.Tags) > l.Tags {
		return &LimitError{Field: "tags", Reason: fmt.Sprintf("%d tags, more than the limit of %d (limits.tags in %s)", len(r.Tags), l.Tags, WorkspaceConfigName)}
	}
	for i, t := range r.Tags {
		if CheckText("", t, l.Tag, "tag", false) != nil {
			return CheckText(fmt.Sprintf("tags[%d]", i), t, l.Tag, "tag", false)
		}
	}
	for _, f := range []struct{ name, v string }{
		{"id", r.ID}, {"supersededBy", r.SupersededBy}, {"provenance.conversationId", r.Provenance.ConversationID},
		{"provenance.runId", r.Provenance.RunID}, {"provenance.author", r.Provenance.Author}, {"provenance.restoredFrom", r.Provenance.RestoredFrom},
	} {
		if err := CheckText(f.name, f.v, l.ID, "id", false); err != nil {
			return err
		}
	}
	if err := l.CheckReason("invalidReason", r.InvalidReason); err != nil {
		return err
	}
	for i, s := range r.Supports {
		if CheckText("", s.ConversationID, l.ID, "id", false) != nil {
			return CheckText(fmt.Sprintf("supports[%d].conversationId", i), s.ConversationID, l.ID, "id", false)
		}
		if CheckText("", s.RunID, l.ID, "id", false) != nil {
			return CheckText(fmt.Sprintf("supports[%d].runId", i), s.RunID, l.ID, "id", false)
		}
	}
	return nil
}

// quoteShort quotes s for a message, cut to at most 40 bytes at a
// character boundary.
func quoteShort(s string) string {
	return fmt.Sprintf("%q", textkernel.Truncate(s, 41))
}
