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

// TestCandidatesShareScopesPastTheBound: a store whose candidates carry
// more distinct scopes and strings than one read remembers (a hostile or
// just varied store) still gives every record its own scope and times, and
// the read remembers at most its bounds.
func TestCandidatesShareScopesPastTheBound(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := openTest(t, filepath.Join(t.TempDir(), "memory.db"), store.Options{Now: clock.Now})
	ctx := context.Background()
	n := maxSharedScopes + 500
	var reqs []store.WriteRequest
	for i := range n {
		req := fact(fmt.Sprintf("fact %d", i), map[string]string{"project": "web", "team": fmt.Sprint(i)})
		req.Target = &schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionProjectContext, Key: fmt.Sprintf("k%d", i)}
		reqs = append(reqs, req)
	}
	if _, err := s.Write(ctx, reqs, human); err != nil {
		t.Fatal(err)
	}
	cands, err := s.Candidates(ctx, map[string]string{"project": "web"}, "")
	if err != nil || len(cands) != n {
		t.Fatalf("Candidates = %d records, %v; want %d", len(cands), err, n)
	}
	for _, r := range cands {
		var i int
		if _, err := fmt.Sscanf(r.Content, "fact %d", &i); err != nil {
			t.Fatal(err)
		}
		if want := (map[string]string{"project": "web", "team": fmt.Sprint(i)}); !maps.Equal(r.Scope, want) {
			t.Fatalf("%s scope = %v, want %v", r.Content, r.Scope, want)
		}
	}
	var sh sharer
	for i := range cands {
		sh.record(&cands[i])
	}
	if len(sh.scopes) > maxSharedScopes || len(sh.strs) > maxSharedStrs {
		t.Errorf("one read remembered %d scopes and %d strings, want at most %d and %d", len(sh.scopes), len(sh.strs), maxSharedScopes, maxSharedStrs)
	}
}
