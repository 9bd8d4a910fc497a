package evolve

import (
	"encoding/json"

	"github.com/agent-ls/agent-ls/schema"
)

// lessonKeys is schema.LessonKeys: examples and awareness domains are one
// lesson by payload, never by prose.
func lessonKeys(t *schema.MemoryTarget, payload json.RawMessage) (lesson, whole string) {
	return schema.LessonKeys(t, payload)
}
