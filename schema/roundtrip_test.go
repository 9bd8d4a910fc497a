package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestAgentFixturesRoundTrip: every testdata agent parses, validates cleanly,
// decodes, and re-encodes to JSON equal (as generic values) to its source.
func TestAgentFixturesRoundTrip(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../testdata/agents/*")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, f := range files {
		if !IsAgentFile(f) {
			continue
		}
		n++
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			d, cfg, ps, err := LoadAgent(f, data)
			if err != nil {
				t.Fatalf("LoadAgent: %v", err)
			}
			for _, p := range ps {
				t.Errorf("%d:%d: %s", p.Range.Start.Line+1, p.Range.Start.Character+1, p.Message)
			}
			if cfg == nil {
				t.Fatal("no config")
			}
			enc, err := json.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var got any
			if err := json.Unmarshal(enc, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, d.Value()) {
				a, _ := json.MarshalIndent(d.Value(), "", " ")
				b, _ := json.MarshalIndent(got, "", " ")
				t.Errorf("round trip differs:\nsource: %s\nre-encoded: %s", a, b)
			}
		})
	}
	if n < 4 {
		t.Errorf("found %d agent fixtures, want at least 4", n)
	}
}
