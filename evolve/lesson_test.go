package evolve

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

// TestPayloadLessons (issue 21 items 1 and 2): awareness domains collide by
// name, case-insensitively; examples are one lesson by payload (normalized
// scenario and good answer), never by prose.
func TestPayloadLessons(t *testing.T) {
	t.Parallel()
	type step struct {
		content, payload, conv string
		status                 string
		sameAs                 int // index of the step whose record it must be (-1: a new record)
		corroborated           bool
		guidance               string
	}
	aw := func(name, desc string) string {
		b, _ := json.Marshal(schema.AwarenessPayload{Name: name, Description: desc, AccessMethod: "the incidents API"})
		return string(b)
	}
	ex := func(scenario, good string) string {
		b, _ := json.Marshal(schema.ExamplePayload{Scenario: scenario, Good: good})
		return string(b)
	}
	cases := []struct {
		name, target string
		steps        []step
	}{
		{"awareness: the same name is a collision", "awareness", []step{
			{"Incident tracker", aw("Incidents", "open incidents"), "c1", string(SaveSaved), -1, false, ""},
			{"Another incident list", aw("incidents", "the on-call list"), "c2", string(SaveConflict), 0, false, "awareness already holds a domain named \"Incidents\""},
		}},
		{"awareness: the same domain again corroborates", "awareness", []step{
			{"Incident tracker", aw("Incidents", "open incidents"), "c1", string(SaveSaved), -1, false, ""},
			{"The incidents domain", aw("INCIDENTS", "Open incidents."), "c2", string(SaveSaved), 0, true, "corroborated"},
		}},
		{"awareness: another name is another domain", "awareness", []step{
			{"Incident tracker", aw("Incidents", "open incidents"), "c1", string(SaveSaved), -1, false, ""},
			{"Incident tracker", aw("Deploys", "open incidents"), "c2", string(SaveSaved), -1, false, ""},
		}},
		{"example: the same payload with other prose is one lesson", "example.code-review", []step{
			{"Asked to approve without tests: refused", ex("A PR without tests asks for approval", "Request tests first"), "c1", string(SaveSaved), -1, false, ""},
			{"Totally different words about it", ex("a PR without tests asks for approval.", "request tests first"), "c2", string(SaveSaved), 0, true, "corroborated"},
		}},
		{"example: the same prose with another scenario is another lesson", "example.code-review", []step{
			{"Asked to approve without tests: refused", ex("A PR without tests asks for approval", "Request tests first"), "c1", string(SaveSaved), -1, false, ""},
			{"Asked to approve without tests: refused", ex("A hotfix without tests asks for approval", "Request tests first"), "c2", string(SaveSaved), -1, false, ""},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			var ids []string
			for i, s := range tc.steps {
				res, err := f.eng.Save(f.ctx, SaveRequest{Content: s.content, Target: tgt(t, tc.target), Payload: json.RawMessage(s.payload),
					Provenance: schema.Provenance{ConversationID: s.conv}, Actor: agentKind})
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if string(res.Status) != s.status {
					t.Fatalf("step %d: status %s, want %s (%s)", i, res.Status, s.status, res.Guidance)
				}
				id := ""
				switch {
				case res.Record != nil:
					id = res.Record.ID
				case res.Existing != nil:
					id = res.Existing.ID
				}
				if s.sameAs >= 0 && id != ids[s.sameAs] {
					t.Errorf("step %d: record %s, want step %d's %s (%s)", i, id, s.sameAs, ids[s.sameAs], res.Guidance)
				}
				if s.sameAs < 0 && s.status == string(SaveSaved) && len(ids) > 0 && id == ids[0] {
					t.Errorf("step %d: matched step 0's record; want a new one (%s)", i, res.Guidance)
				}
				if res.Corroborated != s.corroborated {
					t.Errorf("step %d: corroborated %v, want %v", i, res.Corroborated, s.corroborated)
				}
				if !strings.Contains(res.Guidance, s.guidance) {
					t.Errorf("step %d: guidance %q, want %q in it", i, res.Guidance, s.guidance)
				}
				ids = append(ids, id)
			}
		})
	}
}
