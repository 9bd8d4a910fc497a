package schema

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// decodeViaJSON is the reference decoding: the document re-encoded as JSON
// and decoded by encoding/json with unknown fields disallowed.
func decodeViaJSON(t *testing.T, d *Document) (*AgentConfig, error) {
	t.Helper()
	data, ok := d.JSON("")
	if !ok {
		t.Fatal("JSON of the root failed")
	}
	var cfg AgentConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// TestDecodeAgentMatchesJSON: decoding straight from the node tree gives
// the same config as the JSON round trip, for every committed agent, the
// benchmark file and documents using merge keys, aliases, nulls and
// generic values.
func TestDecodeAgentMatchesJSON(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{"bench.agent.yaml": benchAgentFile()}
	paths, err := filepath.Glob("../testdata/agents/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = data
	}
	files["edge.agent.yaml"] = []byte(strings.Join([]string{
		"roleTemplate:",
		"  name: edge",
		"  persona: &p {identity: an edge case, tone: dry, priorities: [a, b]}",
		"  tone: {name: t, prompt: p, examples: [[l1, x], [l2, y, extra]], anti_patterns: [z]}",
		"  recovery: {name: r, prompt: p, maxAttempts: 3}",
		"  archetype: null",
		"  judgments:",
		"    - &j {domain: ops, heuristics: [h1]}",
		"    - <<: *j",
		"      domain: dev",
		"mission:",
		"  objective: o",
		"  strictOutput: true",
		"  outputSchema: {type: object, properties: {a: {type: [string, 'null']}}, n: 1.5}",
		"background:",
		"  teamContext: {}",
		"  conventions: null",
		"  projectContext: {a/b: 1, c~d: [x, {y: null}], e: true, f: ~}",
		"awareness: {domains: [{name: n, description: d, accessMethod: m}]}",
		"manuals: {cap: {workflows: [w1]}, other: {}}",
		"model: m1",
	}, "\n") + "\n")
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d, err := ParseDocument(name, data)
			if err != nil {
				t.Fatal(err)
			}
			want, err := decodeViaJSON(t, d)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeAgent(d)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("DecodeAgent differs from the JSON round trip:\n got  %+v\n want %+v", got, want)
			}
		})
	}
}

// TestDecodeAgentErrors: wrong types and unknown fields are errors naming
// the pointer, as the JSON decoding rejected them.
func TestDecodeAgentErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ src, want string }{
		{"roleTemplate: {name: 3}\n", "/roleTemplate/name: cannot decode number into string"},
		{"roleTemplate: {nope: 1}\n", `/roleTemplate: unknown field "nope"`},
		{"roleTemplate: {recovery: {maxAttempts: 1.5}}\n", "/roleTemplate/recovery/maxAttempts: cannot decode number into int"},
		{"background: {teamContext: [1]}\n", "/background/teamContext: background section: want an object"},
		{"[1]\n", "/: cannot decode array into schema.AgentConfig"},
	} {
		d, err := ParseDocument("e.agent.yaml", []byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodeViaJSON(t, d); err == nil {
			t.Errorf("%q: the JSON decoding accepts it", tc.src)
		}
		_, err = DecodeAgent(d)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %q", tc.src, err, tc.want)
		}
	}
}

// TestDecodeAgentCopies: the config does not share generic values with the
// document, so changing one leaves the other alone.
func TestDecodeAgentCopies(t *testing.T) {
	t.Parallel()
	d, err := ParseDocument("c.agent.yaml", []byte("background: {projectContext: {m: {a: 1}}}\nmission: {objective: o, outputSchema: {x: [1]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := DecodeAgent(d)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Background.ProjectContext[0].Value.(map[string]any)["a"] = 2.0
	cfg.Mission.OutputSchema.(map[string]any)["x"].([]any)[0] = 2.0
	if v, _ := d.ValueAt("/background/projectContext/m/a"); v != 1.0 {
		t.Errorf("document value changed to %v", v)
	}
	if v, _ := d.ValueAt("/mission/outputSchema/x/0"); v != 1.0 {
		t.Errorf("document value changed to %v", v)
	}
}
