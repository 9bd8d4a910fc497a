package mcpserver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestNewWordsProvenanceNeutrally: New refuses a runtime conversation or
// run id with a control character in words of no surface: a
// *schema.ValueError named "conversation id", a *schema.LimitError named
// "run id", which the CLI words with its --conversation and --run
// (schema.Named). New said "--conversation: ..." and "--run: ...", the
// CLI's flags, to every caller.
func TestNewWordsProvenanceNeutrally(t *testing.T) {
	t.Parallel()
	open := func(context.Context, bool) (store.Store, error) { return nil, errors.New("not opened") }
	for _, tc := range []struct {
		prov schema.Provenance
		want string
	}{
		{schema.Provenance{ConversationID: "c\x01"}, `conversation id "c\x01": contains a control character (U+0001) at rune 2`},
		{schema.Provenance{ConversationID: "c1", RunID: "r\x1b"}, "run id: control character U+001B at byte 1"},
	} {
		_, err := New(Config{AgentFile: "unused.agent.yaml", Provenance: tc.prov, Open: open})
		if err == nil || err.Error() != tc.want {
			t.Errorf("New(%+v) = %v, want %q", tc.prov, err, tc.want)
		}
		if named := schema.Named("--flag", err); err != nil && strings.Count(named.Error(), "id") != 0 {
			t.Errorf("New(%+v): %v is not a typed error a surface can word (%q)", tc.prov, err, named)
		}
	}
}
