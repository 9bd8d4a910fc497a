package schema

import (
	"encoding/json"
	"strings"

	"github.com/agent-ls/agent-ls/textkernel"
)

// LessonKeys identifies what a payload-carrying record teaches, so save,
// curation, lint and the overlay match examples and awareness domains by
// payload, never by prose:
//
//   - an example's lesson is its normalized scenario and good answer: the
//     same pair is the same lesson, another scenario another lesson,
//     whatever the prose says;
//   - an awareness domain's lesson is its name, compared case- and
//     accent-insensitively (textkernel): two domains of one name collide,
//     unless the whole payload is the same (the same lesson).
//
// lesson is "" for other targets and for a payload that does not decode;
// whole is the normalized payload entire.
func LessonKeys(t *MemoryTarget, payload json.RawMessage) (lesson, whole string) {
	if t == nil || len(payload) == 0 {
		return "", ""
	}
	switch t.Primitive {
	case PrimitiveExample:
		var p ExamplePayload
		if json.Unmarshal(payload, &p) != nil || normText(p.Scenario) == "" {
			return "", ""
		}
		lesson = normText(p.Scenario) + "\x00" + normText(p.Good)
		return lesson, lesson
	case PrimitiveAwareness:
		var p AwarenessPayload
		if json.Unmarshal(payload, &p) != nil || normText(p.Name) == "" {
			return "", ""
		}
		lesson = AwarenessKey(p.Name)
		return lesson, lesson + "\x00" + normText(p.Description) + "\x00" + normText(p.AccessMethod)
	}
	return "", ""
}

// AwarenessKey is the identity of an awareness domain name: its text
// kernel words (textkernel.Words), so "Incidents", "incidents",
// "INCIDENTS." and "Inc\u0456dents" (Cyrillic і) are one domain.
func AwarenessKey(name string) string { return normText(name) }

// normText is the text kernel's comparison words of s (textkernel.Words:
// case, width, format characters and confusable letters do not matter).
func normText(s string) string {
	var b strings.Builder
	textkernel.Words(s, func(w string, _ bool) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	})
	return b.String()
}
