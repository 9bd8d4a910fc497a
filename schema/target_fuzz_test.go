package schema

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseTarget feeds the compact target parser arbitrary text, and builds
// arbitrary targets from fields. Properties:
//   - ParseTarget never panics; an error names the input;
//   - a parsed target is valid, String prints exactly the input back, and
//     re-parsing that gives the same target;
//   - the JSON forms (union object and compact string) decode to the same
//     target;
//   - any valid target built from arbitrary fields survives
//     ParseTarget(t.String()) unchanged (dots inside keys, domains and
//     capabilities included).
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{
		"background.projectContext.deploy_window", "background.projectContext.a.b.c",
		"background.nope.k", "background.projectContext", "background.projectContext.",
		"judgment.refunds.heuristics", "judgment.a.b.constraints", "judgment.refunds.nope", "judgment.",
		"example.refunds", "example.", "example", "example.a.b",
		"awareness", "awareness.x", "recovery", "recovery.",
		"manual.deploy.workflows", "manual.a.b.workflows", "manual.deploy.other", "manual.workflows",
		"", ".", "..", "unknown.x", "Background.projectContext.k", "judgment.é🚀.heuristics", "background.projectContext.\x00",
	} {
		f.Add(s, uint8(0), "", "")
	}
	f.Add("", uint8(0), "projectContext", "k.with.dots")
	f.Add("", uint8(1), "a.b", "heuristics")
	f.Add("", uint8(2), "refunds.eu", "")
	f.Add("", uint8(5), "cap.x", "workflows")
	f.Fuzz(func(t *testing.T, s string, prim uint8, a, b string) {
		checkParsedTarget(t, s)

		// A target from fields: when valid, it round-trips through its text.
		var tg MemoryTarget
		switch p := Primitives[int(prim)%len(Primitives)]; p {
		case PrimitiveBackground:
			tg = MemoryTarget{Primitive: p, Section: a, Key: b}
		case PrimitiveJudgment:
			tg = MemoryTarget{Primitive: p, Domain: a, Slot: b}
		case PrimitiveExample:
			tg = MemoryTarget{Primitive: p, JudgmentDomain: a}
		case PrimitiveManual:
			tg = MemoryTarget{Primitive: p, Capability: a, Section: b}
		default:
			tg = MemoryTarget{Primitive: p}
		}
		if tg.Validate() != nil {
			return
		}
		got, err := ParseTarget(tg.String())
		if err != nil {
			t.Fatalf("valid target %+v: ParseTarget(%q): %v", tg, tg.String(), err)
		}
		if got != tg {
			t.Fatalf("ParseTarget(%q) = %+v, want %+v", tg.String(), got, tg)
		}
		checkParsedTarget(t, tg.String())
	})
}

// checkParsedTarget asserts the parse properties of FuzzParseTarget for s.
func checkParsedTarget(t *testing.T, s string) {
	t.Helper()
	tg, err := ParseTarget(s)
	if err != nil {
		if tg != (MemoryTarget{}) {
			t.Fatalf("ParseTarget(%q) failed (%v) but returned %+v", s, err, tg)
		}
		if s != "" && !strings.Contains(err.Error(), "target ") {
			t.Fatalf("ParseTarget(%q): error %q does not name the target", s, err)
		}
		return
	}
	if err := tg.Validate(); err != nil {
		t.Fatalf("ParseTarget(%q) = %+v, which does not validate: %v", s, tg, err)
	}
	if tg.String() != s {
		t.Fatalf("ParseTarget(%q).String() = %q", s, tg.String())
	}
	again, err := ParseTarget(tg.String())
	if err != nil || again != tg {
		t.Fatalf("re-parse of %q: %+v, %v; want %+v", tg.String(), again, err, tg)
	}
	// Both JSON forms decode to the same target (JSON text is UTF-8:
	// encoding/json replaces invalid bytes, so those inputs are skipped).
	if !utf8.ValidString(s) {
		return
	}
	obj, err := json.Marshal(tg)
	if err != nil {
		t.Fatal(err)
	}
	str, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{obj, str} {
		var dec MemoryTarget
		if err := json.Unmarshal(data, &dec); err != nil || dec != tg {
			t.Fatalf("JSON %s decodes to %+v, %v; want %+v", data, dec, err, tg)
		}
	}
}
