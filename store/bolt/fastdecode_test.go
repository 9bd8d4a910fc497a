package bolt

import (
	"encoding/json"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/agent-ls/agent-ls/schema"
)

// fataler is the part of testing.T and rapid.T the decoder checks use.
type fataler interface {
	Helper()
	Fatalf(string, ...any)
}

// sameDecodeAsJSON fails t unless decode decodes data as json.Unmarshal
// into a T does: the same error-ness and the same value.
func sameDecodeAsJSON[T any](t fataler, data []byte, decode func([]byte, *T) error) {
	t.Helper()
	var want, got T
	wantErr := json.Unmarshal(data, &want)
	gotErr := decode(data, &got)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%s: error %v, json.Unmarshal's %v", data, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got  %#v\n want %#v", data, got, want)
	}
}

// sameAsJSON fails t unless unmarshalRecord decodes data as json.Unmarshal
// does.
func sameAsJSON(t fataler, data []byte) { t.Helper(); sameDecodeAsJSON(t, data, unmarshalRecord) }

// recordShapes are stored-record JSON texts: json.Marshal's output (the
// direct decoder's) and every shape it leaves to json.Unmarshal.
var recordShapes = []string{
	`{"id":"r1","scope":{"agent":"a","project":"p"},"kind":"fact","content":"Deploys go out on Thursdays","tags":["ops","deploy"],"provenance":{"conversationId":"c1","runId":"u1","author":"agent:a","at":"2026-01-01T00:00:00Z"},"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-02T00:00:00Z","invalidAt":"2026-02-01T00:00:00Z","invalidReason":"wrong","supersededBy":"r2","expiresAt":"2026-03-01T00:00:00Z","target":{"primitive":"judgment","domain":"ops","slot":"heuristics"},"payload":{"scenario":"s \"q\"","good":["g",1,true,null]},"supports":[{"conversationId":"c2","runId":"u2","at":"2026-01-03T00:00:00Z"},{"conversationId":"c3","at":"x"}]}`,
	`{"id":"r1","scope":{},"kind":"fact","content":"","provenance":{},"createdAt":"","updatedAt":""}`,
	` { "id" : "r1" , "scope" : { "agent" : "a" } , "tags" : [ ] , "supports" : [ ] } `,
	`{"id":"r1","target":{"primitive":"background","section":"projectContext","key":"deploy_window"}}`,
	`{"id":"r1","target":{"primitive":"awareness","judgmentDomain":"ops","capability":"search"}}`,
	`{"id":"r1","payload":[1,2,{"a":"\u00e9"}]}`,
	`{"id":"ünïcødé 日本","content":"résumé — ok"}`,
	`{}`,
	// Left to json.Unmarshal.
	`{"id":"r\"1","content":"a\nb"}`,
	`{"id":"r1","content":"\u00e9"}`,
	`{"id":"r1","tags":null,"scope":null,"target":null,"payload":null,"content":null}`,
	`{"ID":"r1","Content":"case-insensitive keys"}`,
	`{"id":"r1","unknown":{"x":[1,2]},"content":"c"}`,
	`{"id":"r1","id":"r2"}`,
	`{"id":"r1","scope":{"a":"1"},"scope":{"b":"2"}}`,
	`{"id":"r1","scope":{"a":"1","a":"2"}}`,
	`{"id":"r1","target":"judgment.ops.heuristics"}`,
	`{"id":"r1","target":"nonsense"}`,
	`{"id":"r1","target":{"primitive":"judgment","primitive":"background"}}`,
	`{"id":"r1","payload":"a string"}`,
	`{"id":"r1","payload":12}`,
	`{"id":"r1","payload":{"a":}}`,
	`{"id":"r1","payload":{"a":"\x"}}`,
	"{\"id\":\"r\xff1\"}",
	"{\"id\":\"r\x011\"}",
	`{"id":"r1"} trailing`,
	`{"id":"r1"}{}`,
	`{"id":"r1",}`,
	`{"id":"r1"`,
	`{"id":1}`,
	`{"tags":["a",2]}`,
	`{"supports":[{"conversationId":"c","extra":"x"}]}`,
	`{"provenance":{"at":"x","at":"y"}}`,
	`[]`,
	`null`,
	``,
}

func TestUnmarshalRecordShapes(t *testing.T) {
	t.Parallel()
	for _, s := range recordShapes {
		t.Run(s, func(t *testing.T) {
			t.Parallel()
			sameAsJSON(t, []byte(s))
		})
	}
}

// TestUnmarshalRecordDirect: json.Marshal's output of a record takes the
// direct path (no fallback), and the shapes meant for json.Unmarshal do not.
func TestUnmarshalRecordDirect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		data   string
		direct bool
	}{
		{recordShapes[0], true},
		{recordShapes[2], true},
		{`{"id":"r1","content":"\u00e9"}`, false},
		{`{"ID":"r1"}`, false},
		{`{"id":"r1","target":"judgment.ops.heuristics"}`, false},
		{`{"id":"r1","payload":null}`, false},
	}
	for _, tt := range tests {
		var r schema.MemoryRecord
		d := recordDecoder{data: []byte(tt.data)}
		if got := d.record(&r); got != tt.direct {
			t.Errorf("%s: direct %v, want %v", tt.data, got, tt.direct)
		}
	}
}

// TestUnmarshalRecordMarshaled: any record json.Marshal writes decodes as
// json.Unmarshal decodes it.
func TestUnmarshalRecordMarshaled(t *testing.T) {
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
		r := schema.MemoryRecord{ID: s("id"), Kind: schema.Kind(s("kind")), Content: s("content"),
			CreatedAt: s("createdAt"), UpdatedAt: s("updatedAt"), InvalidAt: opt("invalidAt"),
			InvalidReason: opt("invalidReason"), SupersededBy: opt("supersededBy"), ExpiresAt: opt("expiresAt"),
			Provenance: schema.Provenance{ConversationID: opt("conv"), RunID: opt("run"), Author: opt("author"), At: opt("at")}}
		if rapid.Bool().Draw(rt, "scope?") {
			r.Scope = map[string]string{}
			for range rapid.IntRange(0, 3).Draw(rt, "scopes") {
				r.Scope[s("k")] = s("v")
			}
		}
		for range rapid.IntRange(0, 3).Draw(rt, "tags") {
			r.Tags = append(r.Tags, s("tag"))
		}
		if rapid.Bool().Draw(rt, "target?") {
			r.Target = &schema.MemoryTarget{Primitive: schema.Primitive(s("primitive")), Section: opt("section"), Key: opt("key"),
				Domain: opt("domain"), Slot: opt("slot"), JudgmentDomain: opt("jd"), Capability: opt("cap")}
		}
		if rapid.Bool().Draw(rt, "payload?") {
			p, err := json.Marshal(map[string]any{s("pk"): []any{s("pv"), 1.5, nil, map[string]any{}}})
			if err != nil {
				rt.Fatal(err)
			}
			r.Payload = p
		}
		for range rapid.IntRange(0, 2).Draw(rt, "supports") {
			r.Supports = append(r.Supports, schema.Support{ConversationID: s("sc"), RunID: opt("sr"), At: s("sa")})
		}
		data, err := json.Marshal(r)
		if err != nil {
			rt.Fatal(err)
		}
		sameAsJSON(rt, data)
	})
}

func FuzzUnmarshalRecord(f *testing.F) {
	for _, s := range recordShapes {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { sameAsJSON(t, data) })
}
