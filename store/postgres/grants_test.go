package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/postgres"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// RuntimeGrants are the privileges docs/POSTGRES.md ("Team store on
// PostgreSQL") lists for the role agents and editors connect as (data only: it creates
// nothing, and may only append to the ledger). ROLE stands for the role.
const RuntimeGrants = `
GRANT SELECT ON agent_ls_migrations TO ROLE;
GRANT SELECT, UPDATE ON agent_ls_head TO ROLE;
GRANT SELECT, INSERT ON agent_ls_ledger TO ROLE;
GRANT SELECT, INSERT, UPDATE, DELETE ON agent_ls_records, agent_ls_promotions, agent_ls_proposals, agent_ls_summaries TO ROLE;
GRANT SELECT, INSERT, UPDATE ON agent_ls_tokens TO ROLE;`

// TestRuntimeRoleGrants: a role with only the documented grants (after
// memory init by a role that may create) does everything the protocol
// does, cannot create the tables itself (a precise error naming memory
// init), and cannot rewrite the ledger.
func TestRuntimeRoleGrants(t *testing.T) {
	t.Parallel()
	admin := pgtest.Fresh(t)
	ctx := context.Background()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	role := "agent_ls_rt_" + hex.EncodeToString(b)
	base := pgtest.URL(t)
	pgtest.Exec(t, base, `CREATE ROLE `+role+` LOGIN`)
	t.Cleanup(func() {
		pgtest.Exec(t, base, `DROP OWNED BY `+role)
		pgtest.Exec(t, base, `DROP ROLE `+role)
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	schemaName := u.Query().Get("search_path")
	pgtest.Exec(t, admin, `GRANT USAGE ON SCHEMA `+schemaName+` TO `+role)
	u.User = url.User(role)
	runtime := u.String()

	// Before init the runtime role cannot create the tables.
	if _, err := postgres.Open(ctx, runtime, store.Options{}); !errors.Is(err, postgres.ErrNotInitialized) || !strings.Contains(err.Error(), "memory init") {
		t.Fatalf("open before init as the runtime role: %v, want ErrNotInitialized naming memory init", err)
	}
	if _, err := postgres.Init(ctx, admin, store.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range strings.Split(strings.TrimSpace(RuntimeGrants), "\n") {
		pgtest.Exec(t, admin, strings.ReplaceAll(stmt, "ROLE", role))
	}
	s, err := postgres.Open(ctx, runtime, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	human := store.Actor{Kind: store.ActorHuman, Name: "ana"}
	tg, _ := schema.ParseTarget("judgment.deploy.heuristics")
	recs, err := s.Write(ctx, []store.WriteRequest{
		{Kind: schema.KindFact, Content: "one", Target: &tg},
		{Kind: schema.KindFact, Content: "two", Target: &tg},
	}, human)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func() error
	}{
		{"corroborate", func() error {
			_, err := s.Corroborate(ctx, recs[0].ID, schema.Support{ConversationID: "c2"}, human)
			return err
		}},
		{"promote", func() error {
			_, err := s.Promote(ctx, recs[0].ID, store.PromoteRequest{Tier: schema.TierEarned, Actor: human})
			return err
		}},
		{"propose and approve", func() error {
			p, err := s.Propose(ctx, store.ProposalRequest{Kind: store.ProposeDemote, RecordID: recs[0].ID, RequestedBy: human, Invalidate: true})
			if err == nil {
				_, err = s.Approve(ctx, p.ID, human, "ok")
			}
			return err
		}},
		{"delete", func() error { return s.Delete(ctx, recs[1].ID, human) }},
		{"summary", func() error { return s.AppendOverlaySummary(ctx, store.OverlaySummary{Agent: "a"}) }},
		{"token", func() error {
			tok, err := s.CreateToken(ctx, store.Token{Agent: "a", AgentFile: "a.agent.yaml"}, store.TokenHash("als_grants"), human)
			if err == nil {
				_, err = s.TokenByHash(ctx, store.TokenHash("als_grants"))
			}
			if err == nil {
				_, err = s.RevokeToken(ctx, tok.ID, human)
			}
			return err
		}},
		{"verify", func() error { return s.Verify(ctx) }},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Errorf("%s as the runtime role: %v", st.name, err)
		}
	}
	// The ledger is append-only for the runtime role.
	conn := runtime
	if err := pgtest.ExecErr(conn, `UPDATE agent_ls_ledger SET body = body`); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("the runtime role rewrote the ledger: %v", err)
	}
}
