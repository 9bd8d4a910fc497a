package schema

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// sameParse parses src whole and through cache and returns a description
// of the first difference: the error, or the tree (pointers, kinds, key and
// value ranges, values), the node lines, the root range and the
// suppressions.
func sameParse(cache *ParseCache, name string, src []byte) error {
	want, werr := ParseDocument(name, src)
	got, gerr := cache.ParseDocument(name, src)
	if werr != nil || gerr != nil {
		var we, ge *ParseError
		if !errors.As(werr, &we) || !errors.As(gerr, &ge) || *we != *ge {
			return fmt.Errorf("errors differ: whole %v, cached %v", werr, gerr)
		}
		return nil
	}
	if err := sameNode(want.root, got.root); err != nil {
		return err
	}
	if !reflect.DeepEqual(want.nodeLines, got.nodeLines) || want.rootRng != got.rootRng || !reflect.DeepEqual(want.supps, got.supps) {
		return fmt.Errorf("node lines, root range or suppressions differ")
	}
	return nil
}

func sameNode(a, b *node) error {
	if a.ptr != b.ptr || a.kind != b.kind || a.key != b.key || a.val != b.val || a.aliased != b.aliased || len(a.children) != len(b.children) {
		return fmt.Errorf("node %q differs: whole kind %d key %v value %v, %d children; cached kind %d key %v value %v, %d children",
			a.ptr, a.kind, fmtRange(a.key), fmtRange(a.val), len(a.children), b.kind, fmtRange(b.key), fmtRange(b.val), len(b.children))
	}
	if a.kind == kindScalar && !reflect.DeepEqual(a.value, b.value) {
		return fmt.Errorf("node %q value differs: whole %#v, cached %#v", a.ptr, a.value, b.value)
	}
	for i := range a.children {
		if err := sameNode(a.children[i], b.children[i]); err != nil {
			return err
		}
	}
	if !reflect.DeepEqual(a.value, b.value) {
		return fmt.Errorf("node %q value differs", a.ptr)
	}
	return nil
}

// yamlFixtures are the repository's YAML files and the benchmark file.
func yamlFixtures(t testing.TB) map[string][]byte {
	files := map[string][]byte{"bench.agent.yaml": benchAgentFile()}
	err := filepath.WalkDir("../testdata", func(p string, de os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ext := filepath.Ext(p); !de.IsDir() && (ext == ".yaml" || ext == ".yml") {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files[p] = data
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestParseCacheSameAsWhole: every YAML fixture, parsed through a cache
// with pieces of 1 to 64 lines, gives what the whole parse gives; so do
// versions after edits of every line (a line dropped, doubled, indented,
// or changed into YAML punctuation), each parsed through the cache that
// parsed the previous one.
func TestParseCacheSameAsWhole(t *testing.T) {
	t.Parallel()
	split := 0
	for name, src := range yamlFixtures(t) {
		for _, size := range []int{1, 2, 3, 7, 64} {
			cache := newParseCache(size)
			if err := sameParse(cache, name, src); err != nil {
				t.Fatalf("%s (pieces of %d lines): %v", name, size, err)
			}
			if len(cache.pieces) > 0 {
				split++
			}
			if size != 2 {
				continue
			}
			lines := strings.SplitAfter(string(src), "\n")
			step := 1
			if len(lines) > 300 {
				step = 97 // the 2,000-line file: a sample of its lines
			}
			for i := 0; i < len(lines); i += step {
				for _, edit := range []func(string) string{
					func(string) string { return "" },
					func(l string) string { return l + l },
					func(l string) string { return " " + l },
					func(l string) string { return strings.Replace(l, ": ", ": '", 1) },
					func(l string) string { return strings.Replace(l, ": ", ":\n", 1) },
					func(l string) string { return strings.Replace(l, "- ", "- [", 1) },
					func(l string) string { return "# " + l },
					func(l string) string { return strings.TrimLeft(l, " ") },
				} {
					edited := append(append(append([]string{}, lines[:i]...), edit(lines[i])), lines[i+1:]...)
					if err := sameParse(cache, name, []byte(strings.Join(edited, ""))); err != nil {
						t.Fatalf("%s, line %d edited to %q: %v", name, i+1, edit(lines[i]), err)
					}
				}
			}
		}
	}
	if split < 10 {
		t.Fatalf("only %d fixtures were split into pieces", split)
	}
}

// TestParseCacheRandomEdits: random edits (YAML punctuation, line breaks,
// indentation, keys and items typed anywhere), each version parsed through
// the cache of the previous one, always parse to what the whole parse
// gives.
func TestParseCacheRandomEdits(t *testing.T) {
	t.Parallel()
	fixtures := yamlFixtures(t)
	var names []string
	for name := range fixtures {
		if name != "bench.agent.yaml" {
			names = append(names, name)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.SampledFrom(names).Draw(t, "file")
		src := string(fixtures[name])
		cache := newParseCache(rapid.IntRange(1, 8).Draw(t, "size"))
		frags := []string{" ", "  ", "\n", "\n  ", "- ", "k: ", "key:\n  ", ": ", "#", " # c", "'", "\"", "[", "]", "{", "}", ",",
			"|\n", ">-\n", "&a ", "*a", "? ", "---\n", "x", "\t", "é", "\n- x\n", "\nz:\n  - y\n"}
		for step := rapid.IntRange(1, 6).Draw(t, "steps"); step > 0; step-- {
			at := rapid.IntRange(0, len(src)).Draw(t, "at")
			cut := rapid.IntRange(0, min(8, len(src)-at)).Draw(t, "cut")
			ins := rapid.SampledFrom(frags).Draw(t, "insert")
			src = src[:at] + ins + src[at+cut:]
			if err := sameParse(cache, name, []byte(src)); err != nil {
				t.Fatalf("%v\nsource:\n%s", err, src)
			}
		}
	})
}

// TestLoadAgentStagedSameAsLoadAgent: for every agent fixture, valid and
// invalid, LoadAgentStaged's wait returns what LoadAgent returns, and the
// early agent, when wait returns one, is that same agent.
func TestLoadAgentStagedSameAsLoadAgent(t *testing.T) {
	t.Parallel()
	var files []string
	for _, dir := range []string{"../testdata/agents", "../testdata/invalid", "../testdata/lint"} {
		err := filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
			if err == nil && !de.IsDir() && IsAgentFile(p) {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 10 {
		t.Fatalf("found %d agent fixtures", len(files))
	}
	files = append(files, "bench.agent.yaml")
	for _, name := range files {
		data := benchAgentFile()
		if name != "bench.agent.yaml" {
			var err error
			if data, err = os.ReadFile(name); err != nil {
				t.Fatal(err)
			}
		}
		wd, wcfg, wps, werr := LoadAgent(name, data)
		doc, early, wait := newParseCache(3).LoadAgentStaged(name, data)
		gd, gcfg, gps, gerr := wait()
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || !reflect.DeepEqual(wcfg, gcfg) || !reflect.DeepEqual(wps, gps) || (wd == nil) != (gd == nil) {
			t.Fatalf("%s: staged (%v, %v, %v) differs from LoadAgent (%v, %v, %v)", name, gcfg != nil, gps, gerr, wcfg != nil, wps, werr)
		}
		if gd != doc {
			t.Fatalf("%s: wait returned another document", name)
		}
		if gcfg != nil && early != gcfg {
			t.Fatalf("%s: the early agent is not the one wait returned", name)
		}
	}
}

// TestParseCacheLoadAgentEdits: versions of the agent fixtures, each loaded
// through the cache of the previous one, give what LoadAgent gives (the
// config, the problems at their ranges, the error): edits that keep the
// value (comments, blank lines: the kept validation is reused, its problems
// placed in the new text) and edits that change it, at random places.
// Bounded in count and time.
func TestParseCacheLoadAgentEdits(t *testing.T) {
	t.Parallel()
	var files []string
	for _, dir := range []string{"../testdata/agents", "../testdata/invalid", "../testdata/lint"} {
		err := filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
			if err == nil && !de.IsDir() && IsAgentFile(p) {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	r := rand.New(rand.NewSource(35))
	edits := []func(l string) string{
		func(l string) string { return "# a comment\n" + l },
		func(l string) string { return "\n" + l },
		func(l string) string { return strings.TrimSuffix(l, "\n") + " # trailing\n" },
		func(l string) string { return strings.Replace(l, ": ", ": x", 1) },
		func(l string) string { return strings.Replace(l, ": ", ": 12", 1) },
		func(l string) string { return "" },
		func(l string) string { return l + l },
		func(l string) string { return " " + l },
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		cache := newParseCache(1 + r.Intn(8))
		lines := strings.SplitAfter(string(data), "\n")
		for step := 0; step < 12 && time.Now().Before(deadline); step++ {
			i := r.Intn(len(lines))
			lines[i] = edits[r.Intn(len(edits))](lines[i])
			src := []byte(strings.Join(lines, ""))
			wd, wcfg, wps, werr := LoadAgent(name, src)
			gd, gcfg, gps, gerr := cache.LoadAgent(name, src)
			if fmt.Sprint(werr) != fmt.Sprint(gerr) || !reflect.DeepEqual(wcfg, gcfg) || !reflect.DeepEqual(wps, gps) || (wd == nil) != (gd == nil) {
				t.Fatalf("%s step %d: cached (%v, %+v, %v) differs from LoadAgent (%v, %+v, %v)\nsource:\n%s", name, step, gcfg != nil, gps, gerr, wcfg != nil, wps, werr, src)
			}
		}
	}
}

// TestParseCacheReusesEqualValue: a version whose value is unchanged (a
// comment added above everything) gets the config decoded before, the same
// pointer, and problems placed in its own text (one line down); a version
// whose value changed gets a new config.
func TestParseCacheReusesEqualValue(t *testing.T) {
	t.Parallel()
	src := "roleTemplate:\n  name: same\n  persona:\n    identity: x\n    tone: y\n  unknownKey: 1\nmission:\n  objective: z\n"
	valid := strings.Replace(src, "  unknownKey: 1\n", "", 1)
	cache := newParseCache(2)
	_, cfg1, _, err := cache.LoadAgent("a.agent.yaml", []byte(valid))
	if err != nil || cfg1 == nil {
		t.Fatalf("v1: %v %v", cfg1, err)
	}
	_, cfg2, ps2, err := cache.LoadAgent("a.agent.yaml", []byte("# a comment\n"+valid))
	if err != nil || cfg2 != cfg1 || len(ps2) != 0 {
		t.Fatalf("v2 (comment only): config %p, want the same %p; %v %v", cfg2, cfg1, ps2, err)
	}
	_, cfg3, _, err := cache.LoadAgent("a.agent.yaml", []byte(strings.Replace(valid, "tone: y", "tone: w", 1)))
	if err != nil || cfg3 == nil || cfg3 == cfg1 || cfg3.RoleTemplate.Persona.Tone != "w" {
		t.Fatalf("v3 (a value changed): %+v %v", cfg3, err)
	}
	_, _, ps4, _ := cache.LoadAgent("a.agent.yaml", []byte(src))
	_, _, ps5, _ := cache.LoadAgent("a.agent.yaml", []byte("\n"+src))
	_, _, want5, _ := LoadAgent("a.agent.yaml", []byte("\n"+src))
	if len(ps4) == 0 || !reflect.DeepEqual(ps5, want5) || ps5[0].Range.Start.Line != ps4[0].Range.Start.Line+1 {
		t.Fatalf("problems of an equal value one line down: %+v, want %+v (before: %+v)", ps5, want5, ps4)
	}
}
