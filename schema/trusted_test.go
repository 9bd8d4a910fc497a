package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// embeddedSchemas are the schemas compile builds, with the documents of
// the repository each one validates.
var embeddedSchemas = []struct {
	id    string
	src   []byte
	docs  func(path string) bool
	seeds []string // valid documents to mutate besides the repository's
}{
	{AgentSchemaID, AgentSchema, IsAgentFile, nil},
	{RecordSchemaID, RecordSchema, func(p string) bool {
		return strings.HasSuffix(p, ".records.json") || strings.HasSuffix(p, ".jsonl")
	}, []string{
		`{"id": "01JBX0W3A2M9Q8R7S6T5V4W3X2", "scope": {"agent": "deploy-ops"}, "kind": "fact", "content": "Deploys go out Tuesdays", "createdAt": "2026-11-03T14:05:00.000Z", "updatedAt": "2026-11-03T14:05:00.000Z"}`,
		`{"id": "01JBX0W3A2M9Q8R7S6T5V4W3X3", "scope": {"agent": "deploy-ops", "project": "web"}, "kind": "fact", "content": "x", "createdAt": "2026-11-03T14:05:00.000Z", "updatedAt": "2026-11-03T14:05:00.000Z", "target": {"primitive": "background", "section": "projectContext", "key": "deploy_window"}}`,
		`{"id": "01JBX0W3A2M9Q8R7S6T5V4W3X4", "scope": {"agent": "deploy-ops"}, "kind": "preference", "content": "x", "createdAt": "2026-11-03T14:05:00.000Z", "updatedAt": "2026-11-03T14:05:00.000Z", "target": "judgment.code-review.heuristics"}`,
		`{"id": "01JBX0W3A2M9Q8R7S6T5V4W3X5", "scope": {"agent": "deploy-ops"}, "kind": "episode", "content": "x", "createdAt": "2026-11-03T14:05:00.000Z", "updatedAt": "2026-11-03T14:05:00.000Z", "target": {"primitive": "example", "judgmentDomain": "deploy"}, "payload": {"scenario": "s", "good": "g"}}`,
	}},
	{WorkspaceSchemaID, WorkspaceSchema, func(p string) bool { return filepath.Base(p) == ".agent-ls.yaml" }, nil},
}

// TestEmbeddedSchemasValid compiles each embedded schema the checked way
// (against the draft 2020-12 metaschema, as the validator does by
// default), and checks that compile takes the trusted way for each: a
// change to a schema file or to the library that loses it fails here.
func TestEmbeddedSchemasValid(t *testing.T) {
	for _, s := range embeddedSchemas {
		if c := compileChecked(s.id, s.src); c.err != nil {
			t.Errorf("%s: %v", s.id, c.err)
		}
		if _, ok := compileTrusted(s.id, s.src); !ok {
			t.Errorf("%s: does not compile the trusted way", s.id)
		}
	}
	if trustedDraft() == nil {
		t.Error("trustedDraft: the library's Draft has no meta field")
	}
	if jsonschema.Draft2020.String() != "Draft2020" {
		t.Error("Draft2020 changed")
	}
}

func TestTrustedSource(t *testing.T) {
	kw := string(rootSchemaKeyword)
	for _, tc := range []struct {
		name, src, want string
	}{
		{"root keyword first", "{\n  " + kw + "\n  \"type\": \"object\"\n}", "{\n  \n  \"type\": \"object\"\n}"},
		{"no $schema", `{"type": "object"}`, ""},
		{"$schema not first", `{"type": "object", ` + kw + ` "title": "x"}`, ""},
		{"other draft", `{"$schema": "https://json-schema.org/draft-07/schema", "type": "object"}`, ""},
		{"uses format", "{" + kw + ` "properties": {"at": {"type": "string", "format": "date-time"}}}`, ""},
		{"not an object", "[" + kw + "]", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := trustedSource([]byte(tc.src))
			if (got == nil) != (tc.want == "") || got != nil && string(got) != tc.want {
				t.Errorf("trustedSource = %q, want %q", got, tc.want)
			}
		})
	}
	// The trusted source of each embedded schema is the schema less its
	// root "$schema", member for member.
	for _, s := range embeddedSchemas {
		var full, trusted map[string]any
		if err := json.Unmarshal(s.src, &full); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(trustedSource(s.src), &trusted); err != nil {
			t.Fatalf("%s: trusted source: %v", s.id, err)
		}
		delete(full, "$schema")
		a, _ := json.Marshal(full)
		b, _ := json.Marshal(trusted)
		if string(a) != string(b) {
			t.Errorf("%s: trusted source differs beyond the root $schema", s.id)
		}
	}
}

// TestTrustedCompileSameErrors is the differential test of compileTrusted:
// the schema compiled the checked way and the trusted way report the same
// errors (every keyword and instance location and message, in order) on
// the repository's documents and on mutations of each.
func TestTrustedCompileSameErrors(t *testing.T) {
	mutants := 300
	if testing.Short() {
		mutants = 40
	}
	for _, s := range embeddedSchemas {
		checked := compileChecked(s.id, s.src)
		trusted, ok := compileTrusted(s.id, s.src)
		if checked.err != nil || !ok {
			t.Fatalf("%s: compile: checked %v, trusted ok %v", s.id, checked.err, ok)
		}
		docs := corpus(t, s.docs)
		for i, seed := range s.seeds {
			d, err := ParseDocument("seed.json", []byte(seed))
			if err != nil {
				t.Fatal(err)
			}
			if err := checked.schema.Validate(d.Value()); err != nil {
				t.Fatalf("%s: seed %d invalid: %v", s.id, i, err)
			}
			docs = append(docs, corpusDoc{fmt.Sprintf("seed %d", i), d.Value()})
		}
		if len(docs) == 0 {
			t.Fatalf("%s: no documents", s.id)
		}
		rng := rand.New(rand.NewSource(35))
		compared, failing := 0, 0
		for _, doc := range docs {
			vals := []any{doc.value}
			for i := 0; i < mutants; i++ {
				vals = append(vals, mutate(rng, doc.value))
			}
			for i, v := range vals {
				want, got := describe(validateRecovered(checked.schema, v)), describe(validateRecovered(trusted.schema, v))
				if want != got {
					t.Fatalf("%s: %s mutant %d: checked and trusted disagree\nchecked:\n%s\ntrusted:\n%s", s.id, doc.name, i, want, got)
				}
				compared++
				if want != "" {
					failing++
				}
			}
		}
		if failing == 0 || failing == compared {
			t.Errorf("%s: %d of %d documents invalid: the corpus does not exercise both outcomes", s.id, failing, compared)
		}
		t.Logf("%s: %d documents (%d invalid): %d sources and their mutants", s.id, compared, failing, len(docs))
	}
}

// validateRecovered is s.Validate(v), with a panic of the validator (a
// number it cannot read) as an error.
func validateRecovered(s *jsonschema.Schema, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return s.Validate(v)
}

// TestQuickValidAgrees is the differential test of quickValid: wherever it
// decides, it decides as the validator does, on the documents and mutants
// of TestTrustedCompileSameErrors; and it decides every valid document of
// the repository (the fast path a render takes).
func TestQuickValidAgrees(t *testing.T) {
	mutants := 300
	if testing.Short() {
		mutants = 40
	}
	for _, s := range embeddedSchemas {
		c := compile(s.id, s.src)()
		if c.err != nil {
			t.Fatal(c.err)
		}
		docs := corpus(t, s.docs)
		for _, seed := range s.seeds {
			d, err := ParseDocument("seed.json", []byte(seed))
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, corpusDoc{"seed", d.Value()})
		}
		rng := rand.New(rand.NewSource(36))
		var decided, validDecided, total int
		for _, doc := range docs {
			vals := []any{doc.value}
			for i := 0; i < mutants; i++ {
				vals = append(vals, mutate(rng, doc.value))
			}
			for i, v := range vals {
				want := validateRecovered(c.schema, v)
				valid, ok := quickValid(c.schema, v)
				total++
				if !ok {
					if i == 0 && want == nil {
						t.Errorf("%s: %s: quickValid does not decide a valid document", s.id, doc.name)
					}
					continue
				}
				decided++
				if valid {
					validDecided++
				}
				if valid != (want == nil) {
					t.Fatalf("%s: %s mutant %d: quickValid %v, the validator: %v", s.id, doc.name, i, valid, want)
				}
			}
		}
		if validDecided == 0 {
			t.Errorf("%s: quickValid found no document valid", s.id)
		}
		t.Logf("%s: %d documents, %d decided (%d valid)", s.id, total, decided, validDecided)
	}
}

type corpusDoc struct {
	name  string
	value any
}

// corpus is every document under the repository's testdata and examples
// (and this package's fixtures) that match wants and parse: a JSONL file
// gives one document a line, a .records.json file one a record.
func corpus(t *testing.T, wants func(string) bool) []corpusDoc {
	t.Helper()
	var out []corpusDoc
	for _, root := range []string{"../testdata", "../examples", "testdata"} {
		err := filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() || !wants(path) {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			switch {
			case strings.HasSuffix(path, ".jsonl"):
				for i, line := range strings.Split(string(data), "\n") {
					var v any
					if d, err := ParseDocument("r.json", []byte(line)); err == nil {
						v = d.Value()
						out = append(out, corpusDoc{fmt.Sprintf("%s:%d", path, i+1), v})
					}
				}
			case strings.HasSuffix(path, ".records.json"):
				d, err := ParseDocument(path, data)
				if err != nil {
					return err
				}
				arr, _ := d.Value().([]any)
				for i, v := range arr {
					out = append(out, corpusDoc{fmt.Sprintf("%s[%d]", path, i), v})
				}
			default:
				if d, err := ParseDocument(path, data); err == nil {
					out = append(out, corpusDoc{path, d.Value()})
				}
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	return out
}

// describe is every error of a validation: each error's keyword and
// instance locations and message, with its causes (sorted: the validator
// visits a schema's properties in map order, so two runs of one schema
// order causes differently); "" when valid.
func describe(err error) string {
	if err == nil {
		return ""
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return "error: " + err.Error()
	}
	var walk func(e *jsonschema.ValidationError, indent string) string
	walk = func(e *jsonschema.ValidationError, indent string) string {
		causes := make([]string, len(e.Causes))
		for i, c := range e.Causes {
			causes[i] = walk(c, indent+"  ")
		}
		sort.Strings(causes)
		msg := e.Message
		if names := unquoteNames(msg); len(names) > 1 { // listed in map order too
			msg = quotedRE.ReplaceAllString(msg, "'_'") + " " + strings.Join(names, ", ")
		}
		return fmt.Sprintf("%s%s | %s | %s | %s\n", indent, e.KeywordLocation, e.AbsoluteKeywordLocation, e.InstanceLocation, msg) + strings.Join(causes, "")
	}
	return walk(ve, "")
}

// mutate is a deep copy of v with one to three random edits: a value
// replaced by one of another type or an edge value, a string changed, a
// member removed or added, an item removed or duplicated.
func mutate(rng *rand.Rand, v any) any {
	out := copyValue(v)
	for n := 1 + rng.Intn(3); n > 0; n-- {
		out = editSomewhere(rng, out)
	}
	return out
}

// editSomewhere edits v or, mostly, one of its descendants.
func editSomewhere(rng *rand.Rand, v any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 && rng.Intn(6) > 0 {
			keys := sortedKeys(x)
			k := keys[rng.Intn(len(keys))]
			x[k] = editSomewhere(rng, x[k])
			return x
		}
	case []any:
		if len(x) > 0 && rng.Intn(6) > 0 {
			i := rng.Intn(len(x))
			x[i] = editSomewhere(rng, x[i])
			return x
		}
	}
	return editHere(rng, v)
}

var replacements = []any{
	nil, true, false, 0.0, -1.0, 1.5, 1e9, 1e21, math.Inf(1), "", "x", " padded ", "not a target", "héllo wörld",
	strings.Repeat("a", 5000), "2026-11-03T14:05:00.000Z", "72h", "human:ana",
	"01J9Z8K3V4M5N6P7Q8R9S0T1U2", "background.facts.key", []any{}, []any{"x"},
	map[string]any{}, map[string]any{"x": 1.0},
}

func editHere(rng *rand.Rand, v any) any {
	switch x := v.(type) {
	case map[string]any:
		switch rng.Intn(3) {
		case 0:
			if len(x) > 0 {
				delete(x, sortedKeys(x)[rng.Intn(len(x))])
				return x
			}
		case 1:
			x["unknownMember"] = "x"
			return x
		}
	case []any:
		switch rng.Intn(3) {
		case 0:
			if len(x) > 0 {
				i := rng.Intn(len(x))
				return append(x[:i:i], x[i+1:]...)
			}
		case 1:
			if len(x) > 0 {
				return append(x, copyValue(x[rng.Intn(len(x))]))
			}
		}
	case string:
		switch rng.Intn(4) {
		case 0:
			return x + "!"
		case 1:
			return strings.ToUpper(x)
		case 2:
			return x[:len(x)/2]
		}
	}
	return copyValue(replacements[rng.Intn(len(replacements))])
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
