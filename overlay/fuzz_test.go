package overlay

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

// FuzzApply feeds arbitrary record sets (as JSON), arbitrary configs (as
// JSON; the authored base config when the text is not one) and policies
// derived from the inputs to Apply and Render. Properties: no panic;
// neither the config nor the records are mutated; the report accounts for
// every record; Apply is deterministic (the same inputs give the same
// config, report and prompt byte for byte); and the prompt does not depend
// on the order of the records: the reversal and three random permutations
// (seeded from the input) render it identically, and when record ids are
// distinct (the documented canonical order breaks ties by id) the whole
// output is identical.
func FuzzApply(f *testing.F) {
	f.Add(`[{"id":"A","createdAt":"1","content":"x","target":"background.projectContext.k"}]`, "", 10, uint64(0))
	f.Add(`[{"id":"A","createdAt":"1","content":"x\ny","target":"recovery"},{"id":"A","createdAt":"1","content":"z","target":"recovery"}]`, "", 0, uint64(1))
	f.Add(`[{"id":"B","createdAt":"2","content":"","target":"example.refunds","payload":{"scenario":"s","good":"g"}},{"id":"C","target":"awareness","payload":[]}]`, "", 3, uint64(2))
	f.Add(`[{"id":"D","content":"é","target":"manual.a/b~c.workflows"},{"id":"E","target":{"primitive":"judgment","domain":"refunds","slot":"heuristics"},"content":"h"}]`, "", 1, uint64(3))
	f.Add(`[{"id":"A","createdAt":"2","content":"one","target":"background.projectContext.k"},{"id":"B","createdAt":"2","content":"two","target":"background.projectContext.k"},{"id":"C","createdAt":"1","content":"h","target":"judgment.refunds.heuristics","supports":[{"conversationId":"c1"},{"conversationId":"c2"}]},{"id":"D","createdAt":"3","content":"h","target":"judgment.refunds.heuristics"}]`, "", 4, uint64(4))
	f.Add(`[{"id":"A","content":"x","target":"judgment.new.heuristics"},{"id":"B","content":"y","target":"manual.deploy.workflows"}]`,
		`{"roleTemplate":{"name":"n","persona":{"identity":"i","tone":"t"},"judgments":[{"domain":"new"}]},"mission":{"objective":"o"},"capabilities":["deploy"]}`, 50, uint64(5))
	f.Add(`[{"id":"A","content":"x","target":"recovery"}]`, `{"roleTemplate":{"name":"n"}}`, 100, uint64(6))
	f.Add(`[{"id":"A","content":"x","target":"awareness","payload":{"name":"orders","description":"d","accessMethod":"m"}}]`, `{}`, -1, uint64(7))
	baseCfg, err := json.Marshal(base(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, recsJSON, cfgJSON string, budget int, seed uint64) {
		var recs []schema.MemoryRecord
		if json.Unmarshal([]byte(recsJSON), &recs) != nil {
			return
		}
		cfg := new(schema.AgentConfig)
		if json.Unmarshal([]byte(cfgJSON), cfg) != nil {
			cfg = new(schema.AgentConfig)
			if err := json.Unmarshal(baseCfg, cfg); err != nil {
				t.Fatal(err)
			}
		}
		rng := rand.New(rand.NewPCG(seed, seed>>32^0x9e3779b97f4a7c15))
		b := func() int { return []int{budget, 0, 5, 20, 60, 1 << 20}[rng.IntN(6)] }
		p := Policy{Budgets: schema.Budgets{Background: b(), Judgment: b(), Example: b(), Awareness: b(), Recovery: b(), Manual: b()}, Ceiling: budget}

		cfgBefore, _ := json.Marshal(cfg)
		recsBefore, _ := json.Marshal(recs)
		want, prompt, nrep := applySnapshot(t, cfg, recs, p)
		if nrep != len(recs) {
			t.Fatalf("report has %d records for %d inputs", nrep, len(recs))
		}
		if cfgAfter, _ := json.Marshal(cfg); string(cfgAfter) != string(cfgBefore) {
			t.Fatalf("Apply changed the config:\n%s\n%s", cfgBefore, cfgAfter)
		}
		if recsAfter, _ := json.Marshal(recs); string(recsAfter) != string(recsBefore) {
			t.Fatalf("Apply changed the records:\n%s\n%s", recsBefore, recsAfter)
		}
		if again, _, _ := applySnapshot(t, cfg, recs, p); again != want {
			t.Fatalf("Apply is not deterministic:\n%s\n%s", want, again)
		}
		distinct := map[string]bool{}
		for _, r := range recs {
			distinct[r.ID] = true
		}
		perms := [][]schema.MemoryRecord{slices.Clone(recs)}
		slices.Reverse(perms[0])
		for range 3 {
			perm := slices.Clone(recs)
			rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
			perms = append(perms, perm)
		}
		for _, perm := range perms {
			got, gotPrompt, _ := applySnapshot(t, cfg, perm, p)
			if gotPrompt != prompt {
				t.Fatalf("a permutation of the records changed the prompt:\n%s\n%s", prompt, gotPrompt)
			}
			if len(distinct) == len(recs) && got != want {
				t.Fatalf("a permutation of records with distinct ids changed the output:\n%s\n%s", want, got)
			}
		}
	})
}

// applySnapshot is everything Apply and Render produce as one string, the
// annotated prompt, and the number of records the report lists.
func applySnapshot(t *testing.T, cfg *schema.AgentConfig, recs []schema.MemoryRecord, p Policy) (string, string, int) {
	t.Helper()
	c, rep := Apply(cfg, recs, p)
	pr := Render(c, rep.Attribution)
	out, err := json.Marshal(struct {
		Config *schema.AgentConfig
		Report Report
		Prompt Prompt
	}{c, rep, pr})
	if err != nil {
		t.Fatalf("marshal output: %v", err)
	}
	return string(out), pr.Annotated(), len(rep.Records)
}
