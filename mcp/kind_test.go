package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/agent-ls/agent-ls/engine"
)

// TestSaveKindDefaultsToFact: memory_save's kind is optional and defaults
// to fact, as on the command line (issue 22 item 10).
func TestSaveKindDefaultsToFact(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tools, err := f.client.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name != ToolSave {
			continue
		}
		data, err := json.Marshal(tl.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var schema struct {
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(data, &schema); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(schema.Required, "kind") || !slices.Contains(schema.Required, "content") {
			t.Errorf("memory_save requires %v, want content and not kind", schema.Required)
		}
	}
	var out SaveOutput
	f.call(ToolSave, map[string]any{"content": "Deploys freeze on Fridays after 15:00 CET"}, &out)
	if out.Status != string(engine.SaveSaved) || out.Record.Kind != "fact" {
		t.Fatalf("save without kind = %+v", out)
	}
}
