package compose_test

import (
	"os"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/compose"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// TestInstantiateGuessedName: the memories are read from the start for
// the agent name the file's text shows (schema.GuessAgentName); a guess the
// parse contradicts is dropped for a read of the parsed name, a file with
// no guess is read after the parse, and each composes the agent's own
// records only.
func TestInstantiateGuessedName(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(deployAgent)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	// A quoted scalar continued at column 0 shows the guess a roleTemplate
	// that is not one: the guess is decoy-bot, the agent deploy-ops.
	decoy := "model: \"claude-sonnet\nroleTemplate:\n  name: decoy-bot\n  \"\n" + strings.Replace(text, "\nmodel: claude-sonnet\n", "\n", 1)
	// Flow style: no guess.
	flow := strings.Replace(text, "roleTemplate:\n  name: deploy-ops\n", "roleTemplate:\n  \"name\": deploy-ops\n", 1)
	for _, c := range []struct{ name, src, guess string }{
		{"guessed", text, "deploy-ops"},
		{"wrong guess", decoy, "decoy-bot"},
		{"no guess", flow, ""},
	} {
		if got := schema.GuessAgentName([]byte(c.src)); got != c.guess {
			t.Fatalf("%s: guess %q, want %q", c.name, got, c.guess)
		}
	}
	forEachBackend(t, func(t *testing.T, e *env) {
		r := e.write("background.projectContext.deploy_window", "Thursdays after 14:00 ET", "")
		e.promote(r.ID, schema.TierAuto)
		other, err := e.s.Write(e.ctx, []store.WriteRequest{{
			Scope: map[string]string{"user": "u1", "agent": "decoy-bot"}, Kind: schema.KindFact, Content: "decoy fact",
			Target:     &schema.MemoryTarget{Primitive: schema.PrimitiveBackground, Section: schema.SectionProjectContext, Key: "decoy"},
			Provenance: schema.Provenance{ConversationID: "conv-d", RunID: "run-1"},
		}}, agentActor)
		if err != nil {
			t.Fatal(err)
		}
		e.promote(other[0].ID, schema.TierAuto)
		for _, tc := range []struct{ name, src string }{{"guessed", text}, {"wrong guess", decoy}, {"no guess", flow}} {
			t.Run(tc.name, func(t *testing.T) {
				res, err := compose.Instantiate(e.ctx, compose.Request{AgentFile: deployAgent, Store: e.s, Scope: scope, Now: e.clk.Now,
					ReadFile: func(string) ([]byte, error) { return []byte(tc.src), nil }})
				if err != nil {
					t.Fatal(err)
				}
				if res.Agent != "deploy-ops" || len(res.Records) != 1 || res.Records[0].ID != r.ID {
					t.Errorf("agent %q records %v, want deploy-ops [%s]", res.Agent, res.Records, r.ID)
				}
				if strings.Contains(res.Prompt.Text(), "decoy fact") {
					t.Error("the decoy agent's memory is composed")
				}
			})
		}
	})
}
