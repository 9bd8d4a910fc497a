package schema

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sameNodes is SameLayout's meaning, the slow way: every node at the same
// pointer with the same kind and ranges, the same root range and the same
// suppressions on lines of the same range.
func sameNodes(d, o *Document) bool {
	if len(d.nodes) != len(o.nodes) || d.rootRng != o.rootRng || !reflect.DeepEqual(d.supps, o.supps) {
		return false
	}
	for p, n := range d.nodes {
		m, ok := o.nodes[p]
		if !ok || m.kind != n.kind || m.key != n.key || m.val != n.val || m.aliased != n.aliased {
			return false
		}
	}
	for _, s := range d.supps {
		if d.LineRange(s.Line) != o.LineRange(s.Line) {
			return false
		}
	}
	return true
}

// TestSameLayout: over the repo's agent files and random edits (a comment
// or blank lines appended, a character inserted or deleted anywhere, a
// suppression comment added), SameLayout never answers true where the
// nodes or suppressions differ, and answers true for text appended after
// the last node.
func TestSameLayout(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "agents", "*.agent.*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no agent files: %v", err)
	}
	rng := rand.New(rand.NewPCG(7, 35))
	trues, checked := 0, 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d, err := ParseDocument(f, src)
		if err != nil {
			t.Fatal(err)
		}
		json := strings.HasSuffix(f, ".json")
		if !json {
			o, err := ParseDocument(f, append(append([]byte(nil), src...), "# edit 1\n\n"...))
			if err != nil || !d.SameLayout(o) {
				t.Errorf("%s: a comment appended: SameLayout false (err %v)", f, err)
			}
		}
		for i := range 600 {
			text := []byte(string(src))
			switch i % 6 {
			case 0:
				text = append(text, "\n# agent-ls: ignore budget-spill why\n"...)
			case 1:
				at := rng.IntN(len(text) + 1)
				text = append(text[:at], append([]byte{" \n#x-:ab"[rng.IntN(7)]}, text[at:]...)...)
			case 2:
				if at := rng.IntN(len(text)); at < len(text) {
					text = append(text[:at], text[at+1:]...)
				}
			case 3:
				at := strings.LastIndexByte(string(text[:rng.IntN(len(text))+1]), '\n') + 1
				text = append(text[:at], append([]byte("    # agent-ls: ignore pending-review x\n"), text[at:]...)...)
			case 4:
				text = append(text, fmt.Sprintf("\n\n# note %d\n", i)...)
			case 5:
				// A character moved: every offset but those between the
				// two places is kept.
				a, b := rng.IntN(len(text)), rng.IntN(len(text))
				c := text[a]
				text = append(text[:a], text[a+1:]...)
				b = min(b, len(text))
				text = append(text[:b], append([]byte{c}, text[b:]...)...)
			}
			o, err := ParseDocument(f, text)
			if err != nil {
				continue
			}
			checked++
			got, want := d.SameLayout(o), sameNodes(d, o)
			if got && !want {
				t.Fatalf("%s edit %d: SameLayout true, but nodes or suppressions differ:\n%s", f, i, text)
			}
			if got {
				trues++
			}
		}
	}
	if checked < 500 || trues == 0 {
		t.Fatalf("%d edits parsed, %d kept the layout: the property was not exercised", checked, trues)
	}
	if (&Document{}).SameLayout(nil) {
		t.Error("SameLayout of an empty document and nil")
	}
}
