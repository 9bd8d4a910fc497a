package bolt

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// sameEntryAsJSON fails t unless unmarshalEntry decodes data as
// json.Unmarshal does (the same error-ness and the same entry), and
// store.DecodeEntryJSON with it gives store.EntryFromJSON's answer.
func sameEntryAsJSON(t fataler, data []byte) {
	t.Helper()
	sameDecodeAsJSON(t, data, unmarshalEntry)
	we, wok, werr := store.EntryFromJSON(data)
	ge := store.LedgerEntry{Seq: 99, Reason: "left over"} // DecodeEntryJSON starts from the zero entry
	gok, gerr := store.DecodeEntryJSON(data, &ge, unmarshalEntry)
	if wok != gok || (werr == nil) != (gerr == nil) || (werr == nil && !reflect.DeepEqual(ge, we)) {
		t.Fatalf("%s: DecodeEntryJSON ok %v err %v, EntryFromJSON's ok %v err %v", data, gok, gerr, wok, werr)
	}
}

// sealed is the stored JSON of e sealed at seq 7 (SealEntryJSON).
func sealed(t interface{ Fatalf(string, ...any) }, e store.LedgerEntry) []byte {
	_, b, err := store.SealEntryJSON(e, 7, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
	if err != nil {
		t.Fatalf("seal: %v", err)
	}
	return b
}

var entryRecord = schema.MemoryRecord{ID: "r1", Scope: map[string]string{"agent": "a"}, Kind: "fact", Content: "Deploys go out on Thursdays",
	Tags: []string{"ops"}, Provenance: schema.Provenance{ConversationID: "c1", Author: "agent:a", At: "2026-01-01T00:00:00Z"},
	CreatedAt: "2026-01-01T00:00:00Z", UpdatedAt: "2026-01-01T00:00:00Z",
	Target:   &schema.MemoryTarget{Primitive: "background", Section: "projectContext", Key: "deploy_window"},
	Payload:  json.RawMessage(`{"k":[1,"v"]}`),
	Supports: []schema.Support{{ConversationID: "c2", At: "2026-01-02T00:00:00Z"}}}

// entryExamples are entries of every shape the ledger stores: the direct
// decoder's (direct true) and those it leaves to json.Unmarshal.
var entryExamples = []struct {
	e      store.LedgerEntry
	direct bool
}{
	{store.LedgerEntry{At: "2026-01-01T00:00:00Z", Op: store.OpWrite, RecordID: "r1", Actor: store.Actor{Kind: store.ActorAgent, Name: "a"}, Record: &entryRecord}, true},
	{store.LedgerEntry{At: "2026-01-01T00:00:00Z", Op: store.OpPromote, RecordID: "r1", Actor: store.Actor{Kind: store.ActorHuman, Name: "h"}, Tier: "team", Approver: "human:h",
		Evidence: &store.Evidence{Conversations: []string{"c1", "c2"}, ApprovedBy: "human:h", ProposalID: "p1", Note: "ok"}}, true},
	{store.LedgerEntry{At: "2026-01-01T00:00:00Z", Op: store.OpPromote, RecordID: "r1", Actor: store.Actor{Kind: store.ActorHuman, Name: "h"}, Evidence: &store.Evidence{}}, true},
	{store.LedgerEntry{At: "x", Op: store.OpCorroborate, RecordID: "r1", Support: &schema.Support{ConversationID: "c3", RunID: "u", At: "y"}}, true},
	{store.LedgerEntry{At: "x", Op: store.OpInvalidate, RecordID: "r1", Reason: "wrong"}, true},
	{store.LedgerEntry{At: "x", Op: store.OpSupersede, RecordID: "r0", ProposalID: "p", Record: &entryRecord}, true},
	{store.LedgerEntry{At: "x", Op: store.OpPromote, RecordID: "r1", Evidence: &store.Evidence{Eval: &store.EvalResult{BaseScore: 0.5, CandidateScore: 0.75, Passed: 3}}}, false},
	{store.LedgerEntry{At: "x", Op: store.OpApprove, RecordID: "r1", Proposal: &store.Proposal{ID: "p1", Kind: store.ProposePromote, RecordID: "r1", State: "approved"}}, false},
	{store.LedgerEntry{At: "x", Op: store.OpConflict, Conflict: &store.ConflictInfo{Records: []string{"r1", "r2"}, Target: "t"}}, false},
	{store.LedgerEntry{At: "x", Op: store.OpTokenCreate, Token: &store.StoredToken{Hash: "h"}}, false},
	{store.LedgerEntry{At: "x\ny", Op: store.OpWrite}, false},
}

// entryShapes are ledger-entry JSON texts the direct decoder must leave to
// json.Unmarshal or reject as it does.
var entryShapes = []string{
	`{"seq":1,"at":"x","op":"write","actor":{"kind":"agent","name":"a"},"prevHash":"","hash":"h"}`,
	` { "seq" : 1 , "at" : "x" , "actor" : { } , "evidence" : { "conversations" : [ ] } } `,
	`{}`,
	`{"seq":0}`,
	`{"seq":18446744073709551615}`,
	`{"seq":18446744073709551616}`,
	`{"seq":01}`,
	`{"seq":-1}`,
	`{"seq":1.0}`,
	`{"seq":1e2}`,
	`{"seq":1E2}`,
	`{"seq":"1"}`,
	`{"seq":}`,
	`{"seq":null}`,
	`{"Seq":1,"AT":"x"}`,
	`{"seq":1,"seq":2}`,
	`{"actor":{"kind":"agent","kind":"human"}}`,
	`{"actor":{"kind":"agent","other":"x"}}`,
	`{"actor":null}`,
	`{"evidence":null,"support":null,"record":null}`,
	`{"evidence":{"conversations":["a",1]}}`,
	`{"evidence":{"conversations":null}}`,
	`{"evidence":{"eval":{"baseScore":1}}}`,
	`{"record":{"id":"r1","id":"r2"}}`,
	`{"record":{"id":"r1","target":"judgment.ops.heuristics"}}`,
	`{"record":{"id":"r1","payload":{"a":}}}`,
	`{"record":{"id":"r1"}`,
	`{"record":"r1"}`,
	`{"support":{"at":"x","at":"y"}}`,
	`{"unknown":1}`,
	`{"hash":"h"} trailing`,
	`{"hash":"h"}{}`,
	`{"hash":"h",}`,
	`{"hash":"\u0068"}`,
	"{\"hash\":\"h\xff\"}",
	"{\"hash\":\"h\x01\"}",
	`[]`,
	`null`,
	``,
}

func TestUnmarshalEntryShapes(t *testing.T) {
	t.Parallel()
	for _, s := range entryShapes {
		t.Run(s, func(t *testing.T) {
			t.Parallel()
			sameEntryAsJSON(t, []byte(s))
		})
	}
	for _, ex := range entryExamples {
		sameEntryAsJSON(t, sealed(t, ex.e))
	}
}

// TestUnmarshalEntryDirect: the entries vouching reads (writes,
// promotions, corroborations, ...) take the direct path; proposals,
// conflicts, tokens, eval results and escapes do not.
func TestUnmarshalEntryDirect(t *testing.T) {
	t.Parallel()
	for _, ex := range entryExamples {
		data := sealed(t, ex.e)
		var e store.LedgerEntry
		d := recordDecoder{data: data}
		got := d.entry(&e)
		d.ws()
		got = got && d.pos == len(data)
		if got != ex.direct {
			t.Errorf("%s: direct %v, want %v", data, got, ex.direct)
		}
	}
}

// TestUnmarshalEntryTampered: every entry with one byte changed, removed or
// doubled decodes (or fails) as json.Unmarshal has it, and its hash check
// agrees with store.EntryFromJSON's: only the unchanged entry matches.
func TestUnmarshalEntryTampered(t *testing.T) {
	t.Parallel()
	subst := []byte{'"', '\\', '{', '}', '[', ']', ',', ':', '0', '9', '-', '.', 'e', 'x', ' ', 0x01, 0xff}
	for _, ex := range entryExamples {
		data := sealed(t, ex.e)
		var e store.LedgerEntry
		if ok, err := store.DecodeEntryJSON(data, &e, unmarshalEntry); !ok || err != nil {
			t.Fatalf("%s: ok %v err %v for the sealed entry", data, ok, err)
		}
		for i := range data {
			for _, c := range subst {
				if c == data[i] {
					continue
				}
				v := bytes.Clone(data)
				v[i] = c
				sameEntryAsJSON(t, v)
				if ok, _ := store.DecodeEntryJSON(v, &e, unmarshalEntry); ok && !bytes.Equal(v, data) {
					// Only a change json.Unmarshal cannot see (it
					// decodes the same entry) may still match.
					var a, b store.LedgerEntry
					if json.Unmarshal(v, &a) != nil || json.Unmarshal(data, &b) != nil || !reflect.DeepEqual(a, b) {
						t.Fatalf("%s: a tampered entry matches its hash", v)
					}
				}
			}
			sameEntryAsJSON(t, append(bytes.Clone(data[:i]), data[i+1:]...))
			sameEntryAsJSON(t, append(bytes.Clone(data[:i+1]), data[i:]...))
		}
	}
}

// TestUnmarshalEntryMarshaled: any write, promote or corroborate entry
// json.Marshal writes decodes as json.Unmarshal decodes it.
func TestUnmarshalEntryMarshaled(t *testing.T) {
	t.Parallel()
	str := rapid.StringOf(rapid.RuneFrom([]rune("aé日 \"\\\n\t<>&\u2028~"))).AsAny()
	rapid.Check(t, func(rt *rapid.T) {
		s := func(name string) string { return str.Draw(rt, name).(string) }
		opt := func(name string) string {
			if rapid.Bool().Draw(rt, name+"?") {
				return s(name)
			}
			return ""
		}
		e := store.LedgerEntry{Seq: rapid.Uint64().Draw(rt, "seq"), At: s("at"), Op: store.Op(s("op")), RecordID: opt("recordId"),
			ProposalID: opt("proposalId"), Actor: store.Actor{Kind: store.ActorKind(s("kind")), Name: s("name")}, Reason: opt("reason"),
			Tier: schema.Tier(opt("tier")), Approver: opt("approver"), PrevHash: s("prevHash"), Hash: s("hash")}
		if rapid.Bool().Draw(rt, "evidence?") {
			e.Evidence = &store.Evidence{ApprovedBy: opt("approvedBy"), ProposalID: opt("evProposal"), Note: opt("note")}
			for range rapid.IntRange(0, 3).Draw(rt, "convs") {
				e.Evidence.Conversations = append(e.Evidence.Conversations, s("conv"))
			}
		}
		if rapid.Bool().Draw(rt, "support?") {
			e.Support = &schema.Support{ConversationID: s("sc"), RunID: opt("sr"), At: s("sa")}
		}
		if rapid.Bool().Draw(rt, "record?") {
			r := entryRecord
			r.ID, r.Content, r.Provenance.RunID = s("id"), s("content"), opt("run")
			r.Scope = map[string]string{s("sk"): s("sv")}
			e.Record = &r
		}
		data, err := json.Marshal(e)
		if err != nil {
			rt.Fatal(err)
		}
		sameEntryAsJSON(rt, data)
	})
}

func FuzzUnmarshalEntry(f *testing.F) {
	for _, s := range entryShapes {
		f.Add([]byte(s))
	}
	for _, ex := range entryExamples {
		f.Add(sealed(f, ex.e))
	}
	f.Fuzz(func(t *testing.T, data []byte) { sameEntryAsJSON(t, data) })
}

// samePromotionAsJSON fails t unless unmarshalPromotion decodes data as
// json.Unmarshal does.
func samePromotionAsJSON(t fataler, data []byte) {
	t.Helper()
	sameDecodeAsJSON(t, data, unmarshalPromotion)
}

var promotionShapes = []string{
	`{"recordId":"r1","tier":"team","promotedAt":"2026-01-01T00:00:00Z","actor":{"kind":"human","name":"h"},"approver":"human:h","evidence":{"conversations":["c1"],"approvedBy":"human:h","proposalId":"p","note":"n"}}`,
	`{"recordId":"r1","tier":"","promotedAt":"","actor":{"kind":"","name":""},"evidence":{}}`,
	`{"recordId":"r1","evidence":{"eval":{"baseScore":0.5,"passed":2}}}`,
	`{"recordId":"r1","recordId":"r2"}`,
	`{"RecordID":"r1"}`,
	`{"recordId":"r\u0031"}`,
	`{"recordId":null,"evidence":null}`,
	`{"recordId":"r1","extra":1}`,
	`{"recordId":"r1"} x`,
	`{"recordId":"r1"`,
	`{}`,
	`[]`,
	``,
}

// TestUnmarshalPromotion: stored rows, generated rows and every row with a
// byte changed, removed or doubled decode as json.Unmarshal has them.
func TestUnmarshalPromotion(t *testing.T) {
	t.Parallel()
	for _, s := range promotionShapes {
		samePromotionAsJSON(t, []byte(s))
	}
	var p store.Promotion
	d := recordDecoder{data: []byte(promotionShapes[0])}
	if !d.promotion(&p) {
		t.Errorf("a stored promotion row does not take the direct path")
	}
	subst := []byte{'"', '\\', '{', '}', '[', ']', ',', ':', 'x', ' ', 0x01, 0xff}
	data := []byte(promotionShapes[0])
	for i := range data {
		for _, c := range subst {
			v := bytes.Clone(data)
			v[i] = c
			samePromotionAsJSON(t, v)
		}
		samePromotionAsJSON(t, append(bytes.Clone(data[:i]), data[i+1:]...))
		samePromotionAsJSON(t, append(bytes.Clone(data[:i+1]), data[i:]...))
	}
	str := rapid.StringOf(rapid.RuneFrom([]rune("aé日 \"\\\n<&\u2028"))).AsAny()
	rapid.Check(t, func(rt *rapid.T) {
		s := func(name string) string { return str.Draw(rt, name).(string) }
		p := store.Promotion{RecordID: s("id"), Tier: schema.Tier(s("tier")), PromotedAt: s("at"),
			Actor: store.Actor{Kind: store.ActorKind(s("kind")), Name: s("name")}, Approver: s("approver"),
			Evidence: store.Evidence{ApprovedBy: s("by"), ProposalID: s("prop"), Note: s("note")}}
		for range rapid.IntRange(0, 2).Draw(rt, "convs") {
			p.Evidence.Conversations = append(p.Evidence.Conversations, s("conv"))
		}
		data, err := json.Marshal(p)
		if err != nil {
			rt.Fatal(err)
		}
		samePromotionAsJSON(rt, data)
	})
}

func FuzzUnmarshalPromotion(f *testing.F) {
	for _, s := range promotionShapes {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { samePromotionAsJSON(t, data) })
}
