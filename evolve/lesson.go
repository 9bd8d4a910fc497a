package evolve

import (
	"encoding/json"
	"strings"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// lessonKeys identifies what a payload-carrying record teaches, so Save
// matches examples and awareness domains by payload, never by prose:
//
//   - an example's lesson is its normalized scenario and good answer: the
//     same pair is the same lesson (corroborated), another scenario is
//     another lesson (a new record) whatever the prose says;
//   - an awareness domain's lesson is its name, case-insensitively: two
//     domains of one name collide (the second is refused, supersede or
//     rename), unless the whole payload is the same (corroborated).
//
// lesson is "" for other targets and for a payload that does not decode;
// whole is the normalized payload entire.
func lessonKeys(t *schema.MemoryTarget, payload json.RawMessage) (lesson, whole string) {
	if t == nil || len(payload) == 0 {
		return "", ""
	}
	norm := func(s string) string { return strings.Join(store.Tokenize(s), " ") }
	switch t.Primitive {
	case schema.PrimitiveExample:
		var p schema.ExamplePayload
		if json.Unmarshal(payload, &p) != nil || norm(p.Scenario) == "" {
			return "", ""
		}
		lesson = norm(p.Scenario) + "\x00" + norm(p.Good)
		return lesson, lesson
	case schema.PrimitiveAwareness:
		var p schema.AwarenessPayload
		if json.Unmarshal(payload, &p) != nil || norm(p.Name) == "" {
			return "", ""
		}
		lesson = norm(p.Name)
		return lesson, lesson + "\x00" + norm(p.Description) + "\x00" + norm(p.AccessMethod)
	}
	return "", ""
}
