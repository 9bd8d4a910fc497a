package lint_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/agent-ls/agent-ls/lint"
)

// sarifSchema compiles testdata/lint/sarif-schema-2.1.0.json (see
// testdata/lint/README.md for its source).
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	data, err := os.ReadFile("../testdata/lint/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://json.schemastore.org/sarif-2.1.0.json"
	if err := c.AddResource(url, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSARIFValidates(t *testing.T) {
	t.Parallel()
	s := sarifSchema(t)
	var all []lint.FileFinding
	for _, p := range fixtures(t) {
		for _, f := range lint.Run(loadFixture(t, p).in) {
			all = append(all, lint.FileFinding{File: strings.TrimPrefix(p, "../"), Finding: f})
		}
	}
	if len(all) < 12 {
		t.Fatalf("only %d findings", len(all))
	}
	for _, set := range [][]lint.FileFinding{nil, all} {
		out, err := lint.SARIF(set, "test")
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(v); err != nil {
			t.Fatalf("SARIF does not validate: %#v", err)
		}
	}
	// The validator rejects what SARIF forbids (the test can fail).
	bad := map[string]any{"version": "2.1.0", "runs": []any{map[string]any{"tool": map[string]any{"driver": map[string]any{}}}}}
	if err := s.Validate(bad); err == nil {
		t.Error("a driver without a name validated")
	}
	out, _ := lint.SARIF(all[:1], "test")
	var mutated any
	if err := json.Unmarshal(bytes.Replace(out, []byte(`"level": "`+lint.SARIFLevel(all[0].Severity)+`"`), []byte(`"level": "info"`), -1), &mutated); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(mutated); err == nil {
		t.Error(`level "info" validated`)
	}
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct{ ID string } `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }                 `json:"artifactLocation"`
						Region           struct{ StartLine, StartColumn int } `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out, &log); err != nil {
		t.Fatal(err)
	}
	r := log.Runs[0].Results[0]
	loc := r.Locations[0].PhysicalLocation
	f := all[0]
	if r.RuleID != f.Rule || log.Runs[0].Tool.Driver.Rules[r.RuleIndex].ID != f.Rule || r.Level != lint.SARIFLevel(f.Severity) ||
		loc.ArtifactLocation.URI != f.File || loc.Region.StartLine != f.Range.Start.Line+1 || loc.Region.StartColumn != f.Range.Start.Character+1 {
		t.Errorf("result %+v for finding %+v", r, f)
	}
}
