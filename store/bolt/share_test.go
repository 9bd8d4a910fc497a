package bolt

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestCandidatesShareScopes: the records of one Candidates read with equal
// scopes hold one map between them (what kept 100k candidates at a scope
// map each, issue 35), records with different scopes keep their own, and
// pairs that would run together ({"a": "bc"} and {"ab": "c"}) are not
// taken for each other.
func TestCandidatesShareScopes(t *testing.T) {
	t.Parallel()
	s := openTest(t, filepath.Join(t.TempDir(), "memory.db"), store.Options{Now: newClock().Now})
	ctx := context.Background()
	scopes := []map[string]string{
		{"project": "web", "a": "bc"},
		{"project": "web", "ab": "c"},
		{"project": "web"},
	}
	var reqs []store.WriteRequest
	for i := range 30 {
		req := fact("fact "+string(rune('a'+i)), maps.Clone(scopes[i%len(scopes)]))
		req.Target = &schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionProjectContext, Key: "k" + string(rune('a'+i))}
		reqs = append(reqs, req)
	}
	if _, err := s.Write(ctx, reqs, human); err != nil {
		t.Fatal(err)
	}
	cands, err := s.Candidates(ctx, map[string]string{"project": "web"}, "")
	if err != nil || len(cands) != len(reqs) {
		t.Fatalf("Candidates = %d records, %v; want %d", len(cands), err, len(reqs))
	}
	byScope := map[string]uintptr{}
	for _, r := range cands {
		want := scopes[int(r.Content[len("fact ")]-'a')%len(scopes)]
		if !maps.Equal(r.Scope, want) {
			t.Fatalf("%s scope = %v, want %v", r.Content, r.Scope, want)
		}
		p := reflect.ValueOf(r.Scope).Pointer()
		key := fmt.Sprint(r.Scope) // keys sorted
		if q, ok := byScope[key]; ok && q != p {
			t.Errorf("%s: scope %v not shared with an earlier record of the read", r.Content, r.Scope)
		}
		byScope[key] = p
	}
	if len(byScope) != len(scopes) {
		t.Errorf("%d distinct scopes read, want %d", len(byScope), len(scopes))
	}
	seen := map[uintptr]bool{}
	for _, p := range byScope {
		if seen[p] {
			t.Errorf("two different scopes share one map")
		}
		seen[p] = true
	}
}
