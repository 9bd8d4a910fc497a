package storetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

func (k kit) writeTests() []test {
	return []test{
		{"AssignsIDsAndTimes", func(t *testing.T) {
			e := k.open(t)
			req := fact("Deploys go out Tuesdays", "project", "p", "agent", "bot")
			req.Tags = []string{"ops", "deploy"}
			req.Provenance = schema.Provenance{ConversationID: "c1", RunID: "r1"}
			req.Payload = json.RawMessage(`{"a":1}`)
			r := e.write1(req)
			if !schema.ValidID(r.ID) {
				t.Errorf("id %q is not a valid record id", r.ID)
			}
			now := e.now()
			if r.CreatedAt != now || r.UpdatedAt != now {
				t.Errorf("createdAt %q updatedAt %q, want both %q", r.CreatedAt, r.UpdatedAt, now)
			}
			if r.Provenance.At != now || r.Provenance.ConversationID != "c1" || r.Provenance.RunID != "r1" {
				t.Errorf("provenance %+v: want conversation c1, run r1, at %s", r.Provenance, now)
			}
			if r.Provenance.Author != Human.String() {
				t.Errorf("provenance author %q, want the actor %q by default", r.Provenance.Author, Human.String())
			}
			if r.InvalidAt != "" || r.SupersededBy != "" {
				t.Errorf("new record is invalid: %+v", r)
			}
			if got := e.get(r.ID); canon(got) != canon(r) {
				t.Errorf("Get = %s\nwant  %s", canon(got), canon(r))
			}
		}},
		{"DistinctIDsInOneBatch", func(t *testing.T) {
			e := k.open(t)
			recs := e.write(fact("a"), fact("b"), fact("c"))
			seen := map[string]bool{}
			for _, r := range recs {
				if seen[r.ID] {
					t.Fatalf("duplicate id %s in one batch", r.ID)
				}
				seen[r.ID] = true
				if r.CreatedAt != e.now() {
					t.Errorf("record %s createdAt %s, want the batch's now %s", r.ID, r.CreatedAt, e.now())
				}
			}
		}},
		{"EmptyBatch", func(t *testing.T) {
			e := k.open(t)
			recs, err := e.s.Write(e.ctx, nil, Human)
			if err != nil || len(recs) != 0 {
				t.Fatalf("Write(nil) = %v, %v; want nothing, nil", recs, err)
			}
			if l := e.ledger(store.LedgerFilter{}); len(l) != 0 {
				t.Errorf("empty batch ledgered %v", ops(l))
			}
		}},
		{"InvalidRejectsBatch", func(t *testing.T) {
			bad := []struct {
				name string
				req  store.WriteRequest
			}{
				{"kind", store.WriteRequest{Kind: "note", Content: "x"}},
				{"content", store.WriteRequest{Kind: schema.KindFact, Content: "  "}},
				{"scope value", fact("x", "project", "")},
				{"target", store.WriteRequest{Kind: schema.KindFact, Content: "x", Target: &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment}}},
				{"payload", store.WriteRequest{Kind: schema.KindFact, Content: "x", Payload: json.RawMessage(`{"a":`)}},
				{"expiresAt", store.WriteRequest{Kind: schema.KindFact, Content: "x", ExpiresAt: "tomorrow"}},
			}
			for _, b := range bad {
				t.Run(b.name, func(t *testing.T) {
					e := k.open(t)
					_, err := e.s.Write(e.ctx, []store.WriteRequest{fact("good one"), b.req}, Human)
					wantErr(t, "Write with a bad "+b.name, err, store.ErrInvalid)
					if got := e.all(); len(got) != 0 {
						t.Errorf("a failed batch wrote %v", contents(got))
					}
					if l := e.ledger(store.LedgerFilter{}); len(l) != 0 {
						t.Errorf("a failed batch ledgered %v", ops(l))
					}
				})
			}
		}},
		{"BatchListsLaterWriteFirst", func(t *testing.T) {
			e := k.open(t)
			e.write(fact("a"), fact("b"), fact("c"))
			if got := contents(e.search(store.Query{})); !equalStrings(got, []string{"c", "b", "a"}) {
				t.Errorf("listing %v, want [c b a]", got)
			}
		}},
		{"NewestFirstAcrossBatches", func(t *testing.T) {
			e := k.open(t)
			e.write(fact("old"))
			e.tick()
			e.write(fact("mid1"), fact("mid2"))
			e.tick()
			e.write(fact("new"))
			if got := contents(e.search(store.Query{})); !equalStrings(got, []string{"new", "mid2", "mid1", "old"}) {
				t.Errorf("listing %v, want [new mid2 mid1 old]", got)
			}
		}},
		{"Supersede", func(t *testing.T) {
			e := k.open(t)
			old := e.write1(fact("Deploys on Tuesdays", "project", "p"))
			e.tick()
			req := fact("Deploys on Thursdays", "project", "p")
			req.Supersedes = old.ID
			before := len(e.ledger(store.LedgerFilter{}))
			nu := e.write1(req)
			o := e.get(old.ID)
			if o.InvalidAt != e.now() || o.SupersededBy != nu.ID {
				t.Errorf("old record invalidAt %q supersededBy %q; want %q and %q", o.InvalidAt, o.SupersededBy, e.now(), nu.ID)
			}
			if o.UpdatedAt != e.now() {
				t.Errorf("old record updatedAt %q, want %q", o.UpdatedAt, e.now())
			}
			if got := contents(e.search(store.Query{})); !equalStrings(got, []string{"Deploys on Thursdays"}) {
				t.Errorf("listing %v, want only the new record", got)
			}
			if got := contents(e.search(store.Query{IncludeInvalidated: true})); !equalStrings(got, []string{"Deploys on Thursdays", "Deploys on Tuesdays"}) {
				t.Errorf("listing with invalidated %v", got)
			}
			l := e.ledger(store.LedgerFilter{})[before:]
			if len(l) != 1 || l[0].Op != store.OpSupersede || l[0].RecordID != old.ID || l[0].Record == nil || l[0].Record.ID != nu.ID {
				t.Errorf("supersede ledgered %+v; want one supersede entry naming the old record and carrying the new", l)
			}
		}},
		{"SupersedeUnknownRejectsBatch", func(t *testing.T) {
			e := k.open(t)
			req := fact("new")
			req.Supersedes = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
			_, err := e.s.Write(e.ctx, []store.WriteRequest{fact("fine"), req}, Human)
			wantErr(t, "Write superseding an unknown id", err, store.ErrNotFound)
			if got := e.all(); len(got) != 0 {
				t.Errorf("the failed batch wrote %v", contents(got))
			}
		}},
		{"SupersedeWithinBatchRejected", func(t *testing.T) {
			e := k.open(t, func(o *store.Options) { o.Entropy = zeroReader{} })
			// Ids are predictable with zero entropy: check it, then make
			// the second item supersede the first item's id-to-be.
			probe := schema.NewIDGenerator(zeroReader{})
			want, _ := probe.New(e.clock.Now())
			if r := e.write1(fact("probe")); r.ID != want {
				t.Skipf("backend ids are not predictable from Options.Entropy (got %s, want %s)", r.ID, want)
			}
			e.clock.Advance(time.Second)
			first, _ := schema.NewIDGenerator(zeroReader{}).New(e.clock.Now())
			req := fact("second")
			req.Supersedes = first
			_, err := e.s.Write(e.ctx, []store.WriteRequest{fact("first"), req}, Human)
			wantErr(t, "Write superseding a record of the same batch", err, store.ErrNotFound)
			if got := contents(e.all()); !equalStrings(got, []string{"probe"}) {
				t.Errorf("records %v, want only the probe", got)
			}
		}},
		{"SupersedeTwiceInBatchRejected", func(t *testing.T) {
			e := k.open(t)
			old := e.write1(fact("old"))
			a, b := fact("a"), fact("b")
			a.Supersedes, b.Supersedes = old.ID, old.ID
			_, err := e.s.Write(e.ctx, []store.WriteRequest{a, b}, Human)
			wantErr(t, "two items superseding one record", err, store.ErrConflict)
			if got := contents(e.all()); !equalStrings(got, []string{"old"}) {
				t.Errorf("records %v, want only old", got)
			}
			if got := e.get(old.ID); got.InvalidAt != "" {
				t.Errorf("old record invalidated by a failed batch")
			}
		}},
		{"SupersedeInvalidatedRejected", func(t *testing.T) {
			e := k.open(t)
			old := e.write1(fact("old"))
			if err := e.s.Invalidate(e.ctx, old.ID, "wrong", Human); err != nil {
				t.Fatal(err)
			}
			req := fact("new")
			req.Supersedes = old.ID
			_, err := e.s.Write(e.ctx, []store.WriteRequest{req}, Human)
			wantErr(t, "superseding an invalidated record", err, store.ErrConflict)
		}},
		{"ReturnsCopies", func(t *testing.T) {
			e := k.open(t)
			req := fact("x", "project", "p")
			req.Tags = []string{"t"}
			r := e.write1(req)
			r.Scope["project"] = "changed"
			r.Tags[0] = "changed"
			req.Scope["project"] = "changed2"
			g := e.get(r.ID)
			g.Scope["project"] = "changed3"
			if got := e.get(r.ID); got.Scope["project"] != "p" || got.Tags[0] != "t" {
				t.Errorf("stored record changed through a returned value: %+v", got)
			}
		}},
	}
}

func (k kit) getTests() []test {
	return []test{
		{"Unknown", func(t *testing.T) {
			e := k.open(t)
			_, err := e.s.Get(e.ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV")
			wantErr(t, "Get unknown", err, store.ErrNotFound)
		}},
		{"ReturnsInvalidated", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(fact("x"))
			e.tick()
			if err := e.s.Invalidate(e.ctx, r.ID, "stale", Human); err != nil {
				t.Fatal(err)
			}
			g := e.get(r.ID)
			if g.InvalidAt != e.now() || g.InvalidReason != "stale" {
				t.Errorf("invalidated record %+v: want invalidAt %s, reason stale", g, e.now())
			}
		}},
		{"ReturnsExpired", func(t *testing.T) {
			e := k.open(t)
			req := fact("x")
			req.ExpiresAt = schema.FormatTime(e.clock.Now().Add(time.Hour))
			r := e.write1(req)
			e.clock.Advance(2 * time.Hour)
			if g := e.get(r.ID); g.ExpiresAt != req.ExpiresAt {
				t.Errorf("expired record: expiresAt %q, want %q", g.ExpiresAt, req.ExpiresAt)
			}
		}},
	}
}

func (k kit) searchTests() []test {
	return []test{
		{"PromotedOnly", func(t *testing.T) {
			e := k.open(t)
			recs := e.write(targeted("h1", "judgment.deploy.heuristics", "p", "1"), targeted("h2", "judgment.deploy.heuristics", "p", "1"),
				targeted("c1", "judgment.deploy.constraints", "p", "1"), fact("note", "p", "1"))
			e.promote(recs[0].ID, schema.TierEarned)
			e.promote(recs[2].ID, schema.TierGuarded)
			heur := recs[0].Target
			all := store.Limit(store.Unlimited)
			check := func(what string, q store.Query, want ...string) {
				t.Helper()
				if got := contents(e.search(q)); !equalStrings(got, append([]string{}, want...)) {
					t.Errorf("%s: %v, want %v", what, got, want)
				}
			}
			check("promoted only", store.Query{PromotedOnly: true, Limit: all}, "c1", "h1")
			check("promoted only, one target", store.Query{PromotedOnly: true, Target: heur, Limit: all}, "h1")
			check("promoted only, scope", store.Query{PromotedOnly: true, Scope: scopeOf("p", "2"), Limit: all})
			check("promoted only, text", store.Query{PromotedOnly: true, Text: "h1 h2", Limit: all}, "h1")
			e.tick()
			if err := e.s.Invalidate(e.ctx, recs[0].ID, "old", Human); err != nil {
				t.Fatal(err)
			}
			check("promoted only, invalidated", store.Query{PromotedOnly: true, Target: heur, Limit: all})
			check("promoted only, invalidated included", store.Query{PromotedOnly: true, Target: heur, Limit: all, IncludeInvalidated: true}, "h1")
			if err := e.s.Demote(e.ctx, recs[2].ID, "no", Human); err != nil {
				t.Fatal(err)
			}
			check("promoted only, after a demote", store.Query{PromotedOnly: true, Limit: all})
			check("without the filter", store.Query{Target: heur, Limit: all}, "h2")
		}},
		{"ScopeSubset", func(t *testing.T) {
			e := k.open(t)
			e.write(fact("none"), fact("a1", "a", "1"), fact("a1b2", "a", "1", "b", "2"), fact("a2", "a", "2"), fact("b2", "b", "2"))
			cases := []struct {
				filter map[string]string
				want   []string
			}{
				{nil, []string{"b2", "a2", "a1b2", "a1", "none"}},
				{map[string]string{}, []string{"b2", "a2", "a1b2", "a1", "none"}},
				{scopeOf("a", "1"), []string{"a1b2", "a1"}},
				{scopeOf("a", "1", "b", "2"), []string{"a1b2"}},
				{scopeOf("b", "2"), []string{"b2", "a1b2"}},
				{scopeOf("a", "3"), []string{}},
				{scopeOf("a", "2", "b", "2"), []string{}},
				{scopeOf("c", "1"), []string{}},
			}
			for _, c := range cases {
				if got := contents(e.search(store.Query{Scope: c.filter})); !equalStrings(got, c.want) {
					t.Errorf("scope filter %v: %v, want %v", c.filter, got, c.want)
				}
			}
		}},
		{"Kinds", func(t *testing.T) {
			e := k.open(t)
			p := fact("pref")
			p.Kind = schema.KindPreference
			ep := fact("episode")
			ep.Kind = schema.KindEpisode
			e.write(fact("fact"), p, ep)
			cases := []struct {
				kinds []schema.Kind
				want  []string
			}{
				{nil, []string{"episode", "pref", "fact"}},
				{[]schema.Kind{schema.KindPreference}, []string{"pref"}},
				{[]schema.Kind{schema.KindFact, schema.KindEpisode}, []string{"episode", "fact"}},
				{[]schema.Kind{schema.KindProfile}, []string{}},
			}
			for _, c := range cases {
				if got := contents(e.search(store.Query{Kinds: c.kinds})); !equalStrings(got, c.want) {
					t.Errorf("kinds %v: %v, want %v", c.kinds, got, c.want)
				}
			}
		}},
		{"TagsAll", func(t *testing.T) {
			e := k.open(t)
			a, ab, b := fact("a"), fact("ab"), fact("b")
			a.Tags, ab.Tags, b.Tags = []string{"x"}, []string{"x", "y"}, []string{"y"}
			e.write(a, ab, b)
			cases := []struct {
				tags []string
				want []string
			}{
				{nil, []string{"b", "ab", "a"}},
				{[]string{"x"}, []string{"ab", "a"}},
				{[]string{"x", "y"}, []string{"ab"}},
				{[]string{"z"}, []string{}},
			}
			for _, c := range cases {
				if got := contents(e.search(store.Query{Tags: c.tags})); !equalStrings(got, c.want) {
					t.Errorf("tags %v: %v, want %v", c.tags, got, c.want)
				}
			}
		}},
		{"Target", func(t *testing.T) {
			e := k.open(t)
			e.write(fact("plain"), targeted("window", "background.projectContext.deploy_window"),
				targeted("heur", "judgment.refunds.heuristics"), targeted("window2", "background.projectContext.deploy_window"))
			tg, _ := schema.ParseTarget("background.projectContext.deploy_window")
			if got := contents(e.search(store.Query{Target: &tg})); !equalStrings(got, []string{"window2", "window"}) {
				t.Errorf("target filter: %v", got)
			}
			if got := contents(e.search(store.Query{TargetedOnly: true})); !equalStrings(got, []string{"window2", "heur", "window"}) {
				t.Errorf("targeted only: %v", got)
			}
			other, _ := schema.ParseTarget("background.projectContext.other")
			if got := e.search(store.Query{Target: &other}); len(got) != 0 {
				t.Errorf("other target matched %v", contents(got))
			}
			heur, _ := schema.ParseTarget("judgment.refunds.heuristics")
			for _, c := range []struct {
				q    store.Query
				want []string
			}{
				{store.Query{Targets: []schema.MemoryTarget{tg, heur}}, []string{"window2", "heur", "window"}},
				{store.Query{Targets: []schema.MemoryTarget{heur, other, heur}}, []string{"heur"}},
				{store.Query{Targets: []schema.MemoryTarget{other}}, []string{}},
				{store.Query{Target: &tg, Targets: []schema.MemoryTarget{heur}}, []string{}},
				{store.Query{Target: &tg, Targets: []schema.MemoryTarget{heur, tg}}, []string{"window2", "window"}},
			} {
				if got := contents(e.search(c.q)); !equalStrings(got, c.want) {
					t.Errorf("targets %v (target %v): %v, want %v", c.q.Targets, c.q.Target, got, c.want)
				}
			}
		}},
		{"Limit", func(t *testing.T) {
			e := k.open(t)
			for i := 0; i < 12; i++ {
				e.write1(fact(fmt.Sprintf("r%02d", i)))
				e.tick()
			}
			cases := []struct {
				limit *int
				want  int
				first string
			}{
				{nil, store.DefaultLimit, "r11"},
				{store.Limit(0), 0, ""},
				{store.Limit(3), 3, "r11"},
				{store.Limit(store.Unlimited), 12, "r11"},
				{store.Limit(100), 12, "r11"},
			}
			for _, c := range cases {
				got := e.search(store.Query{Limit: c.limit})
				if len(got) != c.want || (c.want > 0 && got[0].Content != c.first) {
					t.Errorf("limit %v: %d records %v, want %d starting at %s", c.limit, len(got), contents(got), c.want, c.first)
				}
			}
			if got := e.search(store.Query{Limit: store.Limit(0), Text: "r01"}); len(got) != 0 {
				t.Errorf("limit 0 with text returned %v", contents(got))
			}
		}},
		{"InvalidatedExcluded", func(t *testing.T) {
			e := k.open(t)
			recs := e.write(fact("keep"), fact("drop"))
			if err := e.s.Invalidate(e.ctx, recs[1].ID, "no", Human); err != nil {
				t.Fatal(err)
			}
			if got := contents(e.search(store.Query{})); !equalStrings(got, []string{"keep"}) {
				t.Errorf("default search %v, want [keep]", got)
			}
			if got := contents(e.search(store.Query{IncludeInvalidated: true})); !equalStrings(got, []string{"drop", "keep"}) {
				t.Errorf("search with invalidated %v", got)
			}
			if got := contents(e.search(store.Query{Text: "drop"})); len(got) != 0 {
				t.Errorf("text search returned the invalidated record")
			}
		}},
		{"ExpiredNeverReturned", func(t *testing.T) {
			e := k.open(t)
			req := fact("short-lived")
			req.ExpiresAt = schema.FormatTime(e.clock.Now().Add(time.Hour))
			e.write(req, fact("durable"))
			if got := contents(e.search(store.Query{})); !equalStrings(got, []string{"durable", "short-lived"}) {
				t.Errorf("before expiry %v", got)
			}
			e.clock.Advance(time.Hour) // expiresAt == now: expired
			for _, q := range []store.Query{{}, {IncludeInvalidated: true}, {Text: "short lived"}, {Limit: store.Limit(store.Unlimited), IncludeInvalidated: true}} {
				if got := contents(e.search(q)); slices_contains(got, "short-lived") {
					t.Errorf("query %+v returned the expired record: %v", q, got)
				}
			}
		}},
		{"IncludeExpired", func(t *testing.T) {
			// IncludeExpired keeps expired records (a listing of every
			// record with its state, memory list --all); the other filters
			// still apply, and invalidated records still need
			// IncludeInvalidated.
			e := k.open(t)
			short := fact("short-lived")
			short.ExpiresAt = schema.FormatTime(e.clock.Now().Add(time.Hour))
			short.Tags = []string{"tmp"}
			gone := e.write1(fact("retired"))
			e.tick()
			e.write(short, fact("durable"))
			if err := e.s.Invalidate(e.ctx, gone.ID, "wrong", Human); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(2 * time.Hour)
			cases := []struct {
				q    store.Query
				want []string
			}{
				{store.Query{IncludeExpired: true}, []string{"durable", "short-lived"}},
				{store.Query{IncludeExpired: true, IncludeInvalidated: true}, []string{"durable", "short-lived", "retired"}},
				{store.Query{IncludeExpired: true, Text: "short lived"}, []string{"short-lived"}},
				{store.Query{IncludeExpired: true, Tags: []string{"tmp"}}, []string{"short-lived"}},
				{store.Query{IncludeExpired: true, Limit: store.Limit(1)}, []string{"durable"}},
				{store.Query{IncludeInvalidated: true}, []string{"durable", "retired"}},
			}
			for _, c := range cases {
				if got := contents(e.search(c.q)); !equalStrings(got, c.want) {
					t.Errorf("query %+v = %v, want %v", c.q, got, c.want)
				}
			}
		}},
		{"Keywords", func(t *testing.T) { k.keywordCorpus(t) }},
		{"TextMatchesTags", func(t *testing.T) {
			e := k.open(t)
			tagged := fact("prefers large fonts")
			tagged.Tags = []string{"Accessibility", "ui-theme"}
			e.write(tagged, fact("theme of the talk"))
			cases := []struct {
				q    string
				want []string
			}{
				{"accessibility", []string{"prefers large fonts"}},
				{"ui", []string{"prefers large fonts"}},
				{"theme", []string{"theme of the talk", "prefers large fonts"}},
				{"theme fonts", []string{"prefers large fonts", "theme of the talk"}},
			}
			for _, c := range cases {
				if got := contents(e.search(store.Query{Text: c.q})); !equalStrings(got, c.want) {
					t.Errorf("query %q = %v, want %v", c.q, got, c.want)
				}
			}
		}},
		{"TextWithFilters", func(t *testing.T) {
			e := k.open(t)
			e.write(fact("editor theme is dark", "project", "p"), fact("editor theme is light", "project", "q"))
			if got := contents(e.search(store.Query{Text: "editor", Scope: scopeOf("project", "q")})); !equalStrings(got, []string{"editor theme is light"}) {
				t.Errorf("text with scope %v", got)
			}
		}},
	}
}

func slices_contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// keywordCorpus pins the tokenizer and ranking through Search.
func (k kit) keywordCorpus(t *testing.T) {
	e := k.open(t)
	corpus := []string{
		"The user prefers dark-mode in the editor.", // k1 (oldest)
		"Deploys go out Tuesdays after 14:00 ET",    // k2
		"Ana's favourite café is near the office",   // k3
		"Editor font size is 14",                    // k4
		"Use the staging cluster for tests",         // k5 (newest)
		"Résumé review: ÉCOLE naïve Straße",         // k6 (newest, other scope)
	}
	for i, c := range corpus {
		req := fact(c, "corpus", "kw")
		if i == 5 {
			req.Scope = scopeOf("corpus", "other")
		}
		e.write1(req)
		e.tick()
	}
	k1, k2, k3, k4, k5 := corpus[0], corpus[1], corpus[2], corpus[3], corpus[4]
	cases := []struct {
		name, q string
		want    []string
	}{
		{"case folding", "EDITOR", []string{k4, k1}},
		{"trailing punctuation in query", "editor.", []string{k4, k1}},
		{"hyphen splits record words", "dark", []string{k1}},
		{"hyphenated query", "dark-mode", []string{k1}},
		{"possessive record", "ana", []string{k3}},
		{"possessive query", "Ana's", []string{k3}},
		{"accent folded in record", "cafe", []string{k3}},
		{"accent in query", "CAFÉ", []string{k3}},
		{"OR across two words", "tuesdays staging", []string{k5, k2}},
		{"more matching tokens rank first", "editor dark", []string{k1, k4}},
		{"more tokens first regardless of age", "font size editor dark mode user", []string{k1, k4}},
		{"duplicate query tokens count once", "editor editor dark", []string{k1, k4}},
		{"stopword-like token is a token", "the", []string{k5, k3, k1}},
		{"stopword plus word", "the font", []string{k5, k4, k3, k1}},
		{"digits are tokens", "14", []string{k4, k2}},
		{"colon splits", "00", []string{k2}},
		{"no match", "kubernetes", []string{}},
		{"no prefix matching", "edit", []string{}},
		{"no stemming", "editors", []string{}},
		{"punctuation only", "?!...", []string{}},
	}
	for _, c := range cases {
		got := contents(e.search(store.Query{Text: c.q, Scope: scopeOf("corpus", "kw"), Limit: store.Limit(store.Unlimited)}))
		if !equalStrings(got, c.want) {
			t.Errorf("%s: query %q = %q, want %q", c.name, c.q, got, c.want)
		}
	}
	accents := []string{"resume", "école", "ecole", "NAIVE", "strasse"}
	for _, q := range accents {
		got := e.search(store.Query{Text: q, Scope: scopeOf("corpus", "other")})
		if len(got) != 1 {
			t.Errorf("accent folding: query %q found %v, want the résumé record", q, contents(got))
		}
	}
	if got := e.search(store.Query{Text: "  ", Scope: scopeOf("corpus", "kw"), Limit: store.Limit(store.Unlimited)}); len(got) != 5 || !strings.HasPrefix(got[0].Content, "Use the") {
		t.Errorf("blank query lists everything newest first: %v", contents(got))
	}
}

func (k kit) invalidateTests() []test {
	return []test{
		{"Unknown", func(t *testing.T) {
			e := k.open(t)
			err := e.s.Invalidate(e.ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV", "x", Human)
			wantErr(t, "Invalidate unknown", err, store.ErrNotFound)
			if l := e.ledger(store.LedgerFilter{}); len(l) != 0 {
				t.Errorf("failed invalidate ledgered %v", ops(l))
			}
		}},
		{"ReasonStored", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(fact("x"))
			e.tick()
			if err := e.s.Invalidate(e.ctx, r.ID, "turned out wrong", Agent); err != nil {
				t.Fatal(err)
			}
			g := e.get(r.ID)
			if g.InvalidReason != "turned out wrong" || g.InvalidAt != e.now() || g.UpdatedAt != e.now() {
				t.Errorf("record after invalidate: %+v", g)
			}
			l := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpInvalidate}})
			if len(l) != 1 || l[0].Reason != "turned out wrong" || l[0].Actor != Agent || l[0].RecordID != r.ID {
				t.Errorf("invalidate ledger %+v", l)
			}
		}},
		{"TwiceIsNoop", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(fact("x"))
			if err := e.s.Invalidate(e.ctx, r.ID, "first", Human); err != nil {
				t.Fatal(err)
			}
			first := e.get(r.ID)
			e.tick()
			if err := e.s.Invalidate(e.ctx, r.ID, "second", Human); err != nil {
				t.Fatalf("second Invalidate: %v", err)
			}
			if got := e.get(r.ID); canon(got) != canon(first) {
				t.Errorf("second invalidate changed the record:\n%s\n%s", canon(first), canon(got))
			}
			if l := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpInvalidate}}); len(l) != 1 {
				t.Errorf("%d invalidate entries, want 1", len(l))
			}
		}},
	}
}

func (k kit) deleteTests() []test {
	return []test{
		{"OnlyHumans", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(fact("x"))
			wantErr(t, "Delete by an agent", e.s.Delete(e.ctx, r.ID, Agent), store.ErrForbidden)
			wantErr(t, "Delete by a system actor", e.s.Delete(e.ctx, r.ID, System), store.ErrForbidden)
			e.get(r.ID)
			if l := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpDelete}}); len(l) != 0 {
				t.Errorf("forbidden delete ledgered")
			}
		}},
		{"Host", func(t *testing.T) {
			e := k.open(t)
			recs := e.write(fact("x"), fact("y"))
			e.promote(recs[0].ID, schema.TierAuto)
			if err := e.s.Delete(e.ctx, recs[0].ID, Human); err != nil {
				t.Fatal(err)
			}
			_, err := e.s.Get(e.ctx, recs[0].ID)
			wantErr(t, "Get deleted", err, store.ErrNotFound)
			_, err = e.s.Promotion(e.ctx, recs[0].ID)
			wantErr(t, "Promotion of deleted", err, store.ErrNotFound)
			if got := contents(e.all()); !equalStrings(got, []string{"y"}) {
				t.Errorf("after delete %v", got)
			}
			l := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpDelete}})
			if len(l) != 1 || l[0].RecordID != recs[0].ID || l[0].Actor != Human {
				t.Errorf("delete ledger %+v", l)
			}
		}},
		{"Unknown", func(t *testing.T) {
			e := k.open(t)
			wantErr(t, "Delete unknown", e.s.Delete(e.ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV", Human), store.ErrNotFound)
		}},
	}
}

func (k kit) corroborateTests() []test {
	return []test{
		{"DistinctConversations", func(t *testing.T) {
			e := k.open(t)
			req := fact("lesson")
			req.Provenance.ConversationID = "c1"
			r := e.write1(req)
			steps := []struct {
				conv, run string
				want      bool
			}{
				{"c1", "r9", false}, // the conversation that taught it
				{"c2", "r1", true},
				{"c2", "r2", false}, // same conversation, other run
				{"c3", "", true},
				{"c2", "r1", false},
			}
			for i, s := range steps {
				e.tick()
				got, err := e.s.Corroborate(e.ctx, r.ID, schema.Support{ConversationID: s.conv, RunID: s.run}, Agent)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if got != s.want {
					t.Errorf("step %d: corroborate %s counted=%v, want %v", i, s.conv, got, s.want)
				}
			}
			g := e.get(r.ID)
			if g.DistinctConversations() != 3 || len(g.Supports) != 2 {
				t.Fatalf("supports %+v: want c2 and c3", g.Supports)
			}
			if g.Supports[0].ConversationID != "c2" || g.Supports[0].RunID != "r1" || g.Supports[0].At == "" || g.Supports[1].ConversationID != "c3" {
				t.Errorf("supports %+v", g.Supports)
			}
			l := e.ledger(store.LedgerFilter{Ops: []store.Op{store.OpCorroborate}})
			if len(l) != 2 || l[0].Support == nil || l[0].Support.ConversationID != "c2" || l[0].Actor != Agent {
				t.Errorf("corroborate ledger %+v: want 2 entries (only counted ones)", l)
			}
		}},
		{"SupportTimeDefaultsToNow", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(fact("x"))
			e.tick()
			if _, err := e.s.Corroborate(e.ctx, r.ID, schema.Support{ConversationID: "c"}, Agent); err != nil {
				t.Fatal(err)
			}
			if g := e.get(r.ID); len(g.Supports) != 1 || g.Supports[0].At != e.now() || g.UpdatedAt != e.now() {
				t.Errorf("record %+v: support at and updatedAt should be %s", g, e.now())
			}
		}},
		{"Unknown", func(t *testing.T) {
			e := k.open(t)
			_, err := e.s.Corroborate(e.ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV", schema.Support{ConversationID: "c"}, Agent)
			wantErr(t, "Corroborate unknown", err, store.ErrNotFound)
		}},
		{"NeedsConversation", func(t *testing.T) {
			e := k.open(t)
			r := e.write1(fact("x"))
			_, err := e.s.Corroborate(e.ctx, r.ID, schema.Support{RunID: "r"}, Agent)
			wantErr(t, "Corroborate without conversation", err, store.ErrInvalid)
		}},
	}
}
