package store

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

func TestTokenize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello World", []string{"hello", "world"}},
		{"editor.", []string{"editor"}},
		{"dark-mode", []string{"dark", "mode"}},
		{"user's editor", []string{"user", "s", "editor"}},
		{"user’s", []string{"user", "s"}},
		{"Café", []string{"cafe"}},
		{"Cafe\u0301 au lait", []string{"cafe", "au", "lait"}},
		{"Ærø Straße", []string{"aero", "strasse"}},
		{"ŁÓDŹ naïve façade", []string{"lodz", "naive", "facade"}},
		{"the a of", []string{"the", "a", "of"}},
		{"v2.1 x86_64", []string{"v2", "1", "x86", "64"}},
		{"?!... ---", nil},
		{"日本語 テスト", []string{"日本語", "テスト"}},
		{"dup dup", []string{"dup", "dup"}},
	}
	for _, tt := range tests {
		if got := Tokenize(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Tokenize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func rec(id, created, content string, tags ...string) schema.MemoryRecord {
	return schema.MemoryRecord{ID: id, Kind: schema.KindFact, Content: content, Tags: tags, CreatedAt: created, Scope: map[string]string{}}
}

func ids(recs []schema.MemoryRecord) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, r.ID)
	}
	return out
}

func TestRank(t *testing.T) {
	t.Parallel()
	const t1, t2, now = "2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z", "2026-02-01T00:00:00.000Z"
	cands := []Stored{
		{rec("a", t1, "prefers dark mode in the editor"), 1},
		{rec("b", t1, "the editor font is large"), 2},
		{rec("c", t2, "deploys on tuesday", "ops"), 3},
	}
	exp := rec("x", t2, "expired editor note")
	exp.ExpiresAt = t2
	inv := rec("y", t2, "invalid editor note")
	inv.InvalidAt = t2
	cands = append(cands, Stored{exp, 4}, Stored{inv, 5})
	tests := []struct {
		name string
		q    Query
		want []string
	}{
		{"newest first, later write first", Query{}, []string{"c", "b", "a"}},
		{"limit 0", Query{Limit: Limit(0)}, []string{}},
		{"limit 1", Query{Limit: Limit(1)}, []string{"c"}},
		{"unlimited", Query{Limit: Limit(Unlimited)}, []string{"c", "b", "a"}},
		{"include invalidated", Query{IncludeInvalidated: true}, []string{"y", "c", "b", "a"}},
		{"more tokens first", Query{Text: "dark editor"}, []string{"a", "b"}},
		{"or semantics", Query{Text: "tuesday font"}, []string{"c", "b"}},
		{"tags are searched", Query{Text: "OPS"}, []string{"c"}},
		{"no tokens matches nothing", Query{Text: "?!"}, []string{}},
		{"blank text is no text", Query{Text: "  "}, []string{"c", "b", "a"}},
		{"nothing matches", Query{Text: "kubernetes"}, []string{}},
		{"tag filter", Query{Tags: []string{"ops"}}, []string{"c"}},
		{"kind filter", Query{Kinds: []schema.Kind{schema.KindEpisode}}, []string{}},
		{"targeted only", Query{TargetedOnly: true}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ids(Rank(cands, tt.q, now)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func chain(n int) []LedgerEntry {
	var out []LedgerEntry
	prev := ""
	for i := 0; i < n; i++ {
		e := SealEntry(LedgerEntry{At: "2026-01-01T00:00:00.000Z", Op: OpInvalidate, RecordID: string(rune('a' + i)), Actor: Actor{ActorHuman, "ana"}}, uint64(i+1), prev)
		prev = e.Hash
		out = append(out, e)
	}
	return out
}

func TestVerifyChain(t *testing.T) {
	t.Parallel()
	edited := chain(4)
	edited[2].Reason = "tampered"
	removed := chain(4)
	removed = append(removed[:1], removed[2:]...)
	reordered := chain(4)
	reordered[1], reordered[2] = reordered[2], reordered[1]
	resealed := chain(4)
	resealed[1].Reason = "tampered"
	resealed[1] = SealEntry(resealed[1], 2, resealed[0].Hash)
	tail := chain(4)[1:]
	tests := []struct {
		name    string
		entries []LedgerEntry
		badSeq  uint64
	}{
		{"empty", nil, 0},
		{"intact", chain(5), 0},
		{"edited", edited, 3},
		{"removed", removed, 2},
		{"reordered", reordered, 2},
		{"edited and rehashed", resealed, 3},
		{"head removed", tail, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := VerifyChain(tt.entries)
			if tt.badSeq == 0 {
				if err != nil {
					t.Fatalf("VerifyChain: %v", err)
				}
				return
			}
			var le *LedgerError
			if !errors.As(err, &le) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("VerifyChain = %v, want *LedgerError wrapping ErrCorrupt", err)
			}
			if le.Seq != tt.badSeq {
				t.Errorf("bad seq = %d, want %d (%v)", le.Seq, tt.badSeq, err)
			}
		})
	}
}

func TestHashStableAcrossJSON(t *testing.T) {
	t.Parallel()
	r := rec("a", "2026-01-01T00:00:00.000Z", "x <b> & y")
	r.Payload = json.RawMessage(`{ "b": 1,  "a": [1, 2] }`)
	r.Scope = map[string]string{"z": "1", "a": "2"}
	e := SealEntry(LedgerEntry{At: r.CreatedAt, Op: OpWrite, RecordID: "a", Record: &r}, 1, "")
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back LedgerEntry
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if HashEntry(back) != e.Hash {
		t.Fatalf("hash changed across a JSON round trip")
	}
	if err := VerifyChain([]LedgerEntry{back}); err != nil {
		t.Fatal(err)
	}
}

func TestReplayState(t *testing.T) {
	t.Parallel()
	const (
		t1 = "2026-01-01T00:00:00.000Z"
		t2 = "2026-01-02T00:00:00.000Z"
		t3 = "2026-01-03T00:00:00.000Z"
		t4 = "2026-01-04T00:00:00.000Z"
		t5 = "2026-01-05T00:00:00.000Z"
	)
	a := rec("A", t1, "old")
	b := rec("B", t3, "new")
	c := rec("C", t1, "other")
	c.Provenance.ConversationID = "c1"
	entries := []LedgerEntry{
		{At: t1, Op: OpWrite, RecordID: "A", Record: &a},
		{At: t1, Op: OpWrite, RecordID: "C", Record: &c},
		{At: t2, Op: OpPromote, RecordID: "A"},
		{At: t2, Op: OpPromote, RecordID: "C"},
		{At: t2, Op: OpCorroborate, RecordID: "C", Support: &schema.Support{ConversationID: "c2", At: t2}},
		{At: t3, Op: OpSupersede, RecordID: "A", Record: &b},
		{At: t3, Op: OpPromote, RecordID: "B"},
		{At: t4, Op: OpApprove, RecordID: "C", Proposal: &Proposal{ID: "P", Kind: ProposeDemote, RecordID: "C"}},
		{At: t5, Op: OpDelete, RecordID: "B"},
	}
	tests := []struct {
		at   string
		want []string
	}{
		{"2025-12-31T00:00:00.000Z", []string{}},
		{t1, []string{}},
		{t2, []string{"A", "C"}},
		{t3, []string{"B", "C"}},
		{t4, []string{"B"}},
		{t5, []string{}},
	}
	for _, tt := range tests {
		got := ReplayState(entries, tt.at)
		if !reflect.DeepEqual(ids(got), tt.want) {
			t.Errorf("at %s: %v, want %v", tt.at, ids(got), tt.want)
		}
		if tt.at == t2 && len(got[1].Supports) != 1 {
			t.Errorf("at t2: C supports = %v, want one", got[1].Supports)
		}
	}
}

func TestValidateWrite(t *testing.T) {
	t.Parallel()
	ok := WriteRequest{Kind: schema.KindFact, Content: "x", Scope: map[string]string{"a": "b"}}
	mod := func(f func(*WriteRequest)) WriteRequest { r := ok; f(&r); return r }
	tests := []struct {
		name string
		req  WriteRequest
		ok   bool
	}{
		{"ok", ok, true},
		{"bad kind", mod(func(r *WriteRequest) { r.Kind = "note" }), false},
		{"blank content", mod(func(r *WriteRequest) { r.Content = " \n" }), false},
		{"empty scope key", mod(func(r *WriteRequest) { r.Scope = map[string]string{"": "x"} }), false},
		{"empty scope value", mod(func(r *WriteRequest) { r.Scope = map[string]string{"k": ""} }), false},
		{"empty tag", mod(func(r *WriteRequest) { r.Tags = []string{"a", ""} }), false},
		{"bad target", mod(func(r *WriteRequest) { r.Target = &schema.MemoryTarget{Primitive: "x"} }), false},
		{"good target", mod(func(r *WriteRequest) {
			r.Target = &schema.MemoryTarget{Primitive: schema.PrimitiveJudgment, Domain: "d", Slot: schema.SlotHeuristics}
		}), true},
		{"bad payload", mod(func(r *WriteRequest) { r.Payload = json.RawMessage(`{`) }), false},
		{"good payload", mod(func(r *WriteRequest) { r.Payload = json.RawMessage(`{"a":1}`) }), true},
		{"noncanonical expiry", mod(func(r *WriteRequest) { r.ExpiresAt = "2026-01-01T00:00:00Z" }), false},
		{"canonical expiry", mod(func(r *WriteRequest) { r.ExpiresAt = "2026-01-01T00:00:00.000Z" }), true},
	}
	for _, tt := range tests {
		err := ValidateWrite(tt.req)
		if (err == nil) != tt.ok {
			t.Errorf("%s: ValidateWrite = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v does not wrap ErrInvalid", tt.name, err)
		}
	}
}

func TestApplySupport(t *testing.T) {
	t.Parallel()
	r := rec("a", "2026-01-01T00:00:00.000Z", "x")
	r.Provenance.ConversationID = "c1"
	steps := []struct {
		conv string
		want bool
	}{{"c1", false}, {"c2", true}, {"c2", false}, {"c3", true}}
	for _, s := range steps {
		if got := ApplySupport(&r, schema.Support{ConversationID: s.conv}, "2026-01-02T00:00:00.000Z"); got != s.want {
			t.Errorf("ApplySupport(%s) = %v, want %v", s.conv, got, s.want)
		}
	}
	if r.DistinctConversations() != 3 || len(r.Supports) != 2 {
		t.Errorf("supports %v", r.Supports)
	}
}

// TestSealEntryJSON: the bytes SealEntryJSON derives from its hash input
// are exactly json.Marshal of the entry SealEntry seals, for entries of
// every shape the backends store.
func TestSealEntryJSON(t *testing.T) {
	t.Parallel()
	r := rec("a", "2026-01-01T00:00:00.000Z", `quotes " and \ and "hash":"" inside`)
	r.Payload = json.RawMessage(`{ "b": 1,  "a": [1, 2] }`)
	p := Proposal{ID: "p", Kind: ProposePromote, RecordID: "a", State: ProposalPending}
	sup := schema.Support{ConversationID: "c", At: r.CreatedAt}
	for i, e := range []LedgerEntry{
		{At: r.CreatedAt, Op: OpWrite, RecordID: "a", Record: &r},
		{At: r.CreatedAt, Op: OpCorroborate, RecordID: "a", Support: &sup, Actor: Actor{Kind: ActorAgent, Name: "x"}},
		{At: r.CreatedAt, Op: OpPropose, ProposalID: "p", Proposal: &p, Reason: `why "hash":""`},
		{},
	} {
		want := SealEntry(e, uint64(i+7), "prev")
		wantJSON, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		got, gotJSON, err := SealEntryJSON(e, uint64(i+7), "prev")
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if got.Hash != want.Hash || string(gotJSON) != string(wantJSON) {
			t.Errorf("entry %d:\n got %s %s\nwant %s %s", i, got.Hash, gotJSON, want.Hash, wantJSON)
		}
	}
}
