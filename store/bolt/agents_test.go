package bolt

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// searchOnly hides the store's AgentLister: store.Agents then lists by
// Search, the definition the bbolt scan must match.
type searchOnly struct{ store.Reader }

// TestAgentsListsAsSearchDoes: the bbolt agent list, which reads ids and
// scopes in place, equals the list a Search gives, over records of several
// agents and projects, shared records, an invalidated record, an expired
// one, a damaged one, a scope JSON escapes and a value written in another
// key order; and it reads in place: a record of an agent already listed
// is not decoded.
func TestAgentsListsAsSearchDoes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := newClock()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openTest(t, path, store.Options{Now: clock.Now})
	write := func(agent, project, content string, expires string) schema.MemoryRecord {
		t.Helper()
		scope := map[string]string{"project": project}
		if agent != "" {
			scope[store.AgentKey] = agent
		}
		req := fact(content, scope)
		req.ExpiresAt = expires
		return writeOne(t, s, req)
	}
	for i := range 5 {
		write("alpha", "web", fmt.Sprintf("alpha fact %d", i), "")
		write("beta", "api", fmt.Sprintf("beta fact %d", i), "")
	}
	write("", "web", "a shared fact", "")
	inv := write("gamma", "web", "gamma's only fact", "")
	if err := s.Invalidate(ctx, inv.ID, "wrong", human); err != nil {
		t.Fatal(err)
	}
	write("delta", "web", "delta's only fact, expiring", schema.FormatTime(clock.Now().Add(time.Hour)))
	write("a<b&c", "web", "an agent name json.Marshal escapes", "")
	damaged := write("epsilon", "web", "epsilon's only fact", "")
	reordered := write("zeta", "api", "zeta's only fact", "")
	clock.Advance(2 * time.Hour) // delta's record expires

	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		v := b.Get([]byte(damaged.ID))
		// The id and scope still read; the rest does not decode.
		if err := b.Put([]byte(damaged.ID), append(append([]byte(nil), v[:len(v)/2]...), "\x00\x00"...)); err != nil {
			return err
		}
		v = b.Get([]byte(reordered.ID))
		rec, ok := decodeRecord([]byte(reordered.ID), v)
		if !ok {
			return fmt.Errorf("decode %s", reordered.ID)
		}
		m, _ := jsonObject(rec.Rec)
		return b.Put([]byte(reordered.ID), append(append([]byte(nil), v[:8]...), m...))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	for _, base := range []map[string]string{nil, {"project": "web"}, {"project": "api"}, {store.AgentKey: "alpha"},
		{"project": "web", store.AgentKey: "beta"}, {"project": "none"}} {
		got, err := store.Agents(ctx, s, base)
		if err != nil {
			t.Fatal(err)
		}
		want, err := store.Agents(ctx, searchOnly{s}, base)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Agents(%v) = %q, want %q (Search's)", base, got, want)
		}
	}
	all, _ := store.Agents(ctx, s, nil)
	if want := []string{"", "a<b&c", "alpha", "beta", "gamma", "zeta"}; !reflect.DeepEqual(all, want) {
		t.Errorf("Agents = %q, want %q", all, want)
	}
}

// jsonObject writes a record's JSON with its keys in reverse order: valid
// JSON of the same record that json.Marshal would not write.
func jsonObject(r schema.MemoryRecord) ([]byte, error) {
	return []byte(fmt.Sprintf(`{"updatedAt":%q,"createdAt":%q,"provenance":{"conversationId":%q},"content":%q,"kind":%q,"scope":{"agent":%q,"project":%q},"id":%q}`,
		r.UpdatedAt, r.CreatedAt, r.Provenance.ConversationID, r.Content, r.Kind, r.Scope["agent"], r.Scope["project"], r.ID)), nil
}

// TestAgentsDecodesOnlyNewAgents: listing the agents of 2,000 records of
// two agents decodes a record only while its agent is not listed: the
// listing allocates a small fraction of what decoding every record would.
// Not parallel: testing.AllocsPerRun.
func TestAgentsDecodesOnlyNewAgents(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "m.db"), store.Options{Now: newClock().Now})
	var reqs []store.WriteRequest
	for i := range 2000 {
		reqs = append(reqs, fact(fmt.Sprintf("fact number %d", i), map[string]string{store.AgentKey: []string{"alpha", "beta"}[i%2]}))
	}
	if _, err := s.Write(ctx, reqs, human); err != nil {
		t.Fatal(err)
	}
	var names []string
	allocs := testing.AllocsPerRun(3, func() {
		var err error
		if names, err = store.Agents(ctx, s, nil); err != nil {
			t.Fatal(err)
		}
	})
	if !reflect.DeepEqual(names, []string{"alpha", "beta"}) {
		t.Fatalf("Agents = %q", names)
	}
	search := testing.AllocsPerRun(1, func() { _, _ = store.Agents(ctx, searchOnly{s}, nil) })
	// About 60 allocations in all (2,000-2,600 in the -race build, which
	// allocates about one a record more); about 12 a record when the
	// records are decoded.
	if allocs > search/4 {
		t.Errorf("Agents allocated %.0f times, Search's listing %.0f: records of listed agents were decoded", allocs, search)
	}
	t.Logf("allocations: %.0f (by Search: %.0f)", allocs, search)
}
