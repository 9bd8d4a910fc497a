package evolve

import (
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

// TestPayloadMessageGrammar: the article agrees with the primitive (issue
// 22 item 2: "a example", "a awareness").
func TestPayloadMessageGrammar(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ target, want string }{
		{"example.refunds", "an example memory needs a structured payload to promote"},
		{"awareness", "an awareness memory needs a structured payload to promote"},
	} {
		mt, err := schema.ParseTarget(tc.target)
		if err != nil {
			t.Fatal(err)
		}
		if !mt.NeedsPayload() {
			t.Fatalf("%s needs no payload", tc.target)
		}
		if got := checkPayload(&schema.MemoryRecord{Target: &mt}); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.target, got, tc.want)
		}
	}
}
