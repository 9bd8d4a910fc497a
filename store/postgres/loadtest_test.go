package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/postgres"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// loadEnv sets the duration of TestLoadProcesses (make bench: 60s); without
// it the test skips.
const loadEnv = "AGENT_LS_PG_LOAD"

// loadReport is what one load child prints.
type loadReport struct {
	Writes, Corroborations int
	LatenciesUS            []int64
}

// TestLoadChild is not a test: run by TestLoadProcesses with
// AGENT_LS_PG_LOAD_CHILD set, it runs 4 workers on one store handle (a pool
// of 4 connections), each saving an episode and corroborating the shared
// record with a conversation of its own, until the deadline, and prints a
// loadReport.
func TestLoadChild(t *testing.T) {
	loc := os.Getenv("AGENT_LS_PG_LOAD_CHILD")
	if loc == "" {
		t.Skip("child process helper")
	}
	child := os.Getenv("AGENT_LS_PG_LOAD_ID")
	shared := os.Getenv("AGENT_LS_PG_LOAD_SHARED")
	d, err := time.ParseDuration(os.Getenv(loadEnv))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := postgres.Open(ctx, loc, store.Options{LockTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	deadline := time.Now().Add(d)
	var mu sync.Mutex
	var rep loadReport
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			actor := store.Actor{Kind: store.ActorAgent, Name: "load"}
			for i := 0; time.Now().Before(deadline); i++ {
				conv := fmt.Sprintf("c%s-%d-%d", child, w, i)
				start := time.Now()
				_, err := s.Write(ctx, []store.WriteRequest{{Kind: schema.KindEpisode, Content: "episode " + conv, Provenance: schema.Provenance{ConversationID: conv}}}, actor)
				if err != nil {
					t.Error(err)
					return
				}
				counted, err := s.Corroborate(ctx, shared, schema.Support{ConversationID: conv}, actor)
				if err != nil || !counted {
					t.Errorf("corroborate: %v %v", counted, err)
					return
				}
				lat := time.Since(start).Microseconds()
				mu.Lock()
				rep.Writes++
				rep.Corroborations++
				rep.LatenciesUS = append(rep.LatenciesUS, lat)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	b, _ := json.Marshal(rep)
	fmt.Printf("LOADREPORT %s\n", b)
}

// TestLoadProcesses: 8 processes × 4 connections save and corroborate for
// AGENT_LS_PG_LOAD (make bench: 60s) and report throughput and p95 of a
// write+corroborate round; the store then holds exactly every write once,
// the shared record one support per conversation, a ledger of exactly
// that many entries, and verifies.
func TestLoadProcesses(t *testing.T) {
	d := os.Getenv(loadEnv)
	if d == "" {
		t.Skipf("%s is not set (make bench sets it)", loadEnv)
	}
	loc := pgtest.Fresh(t)
	ctx := context.Background()
	s, err := postgres.Open(ctx, loc, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	recs, err := s.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: "shared lesson", Provenance: schema.Provenance{ConversationID: "origin"}}}, store.Actor{Kind: store.ActorHuman, Name: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	const procs = 8
	cmds := make([]*exec.Cmd, procs)
	outs := make([][]byte, procs)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range procs {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestLoadChild$", "-test.count=1", "-test.v")
		cmds[i].Env = append(os.Environ(), "AGENT_LS_PG_LOAD_CHILD="+loc, "AGENT_LS_PG_LOAD_ID="+strconv.Itoa(i), "AGENT_LS_PG_LOAD_SHARED="+recs[0].ID)
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], _ = cmds[i].CombinedOutput()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	var total loadReport
	for i, out := range outs {
		var rep loadReport
		found := false
		for _, line := range strings.Split(string(out), "\n") {
			if rest, ok := strings.CutPrefix(line, "LOADREPORT "); ok {
				found = json.Unmarshal([]byte(rest), &rep) == nil
			}
		}
		if !found {
			t.Fatalf("child %d reported nothing:\n%s", i, out)
		}
		total.Writes += rep.Writes
		total.Corroborations += rep.Corroborations
		total.LatenciesUS = append(total.LatenciesUS, rep.LatenciesUS...)
	}
	slices.Sort(total.LatenciesUS)
	p95 := total.LatenciesUS[len(total.LatenciesUS)*95/100]
	t.Logf("PGLOAD procs=8 conns=4 rounds=%d elapsed=%s throughput=%.0f rounds/s p95=%.1f ms",
		total.Writes, elapsed.Round(time.Millisecond), float64(total.Writes)/elapsed.Seconds(), float64(p95)/1000)
	res, err := s.Search(ctx, store.Query{Limit: store.Limit(store.Unlimited), IncludeInvalidated: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != total.Writes+1 {
		t.Errorf("%d records, want %d", len(res.Records), total.Writes+1)
	}
	shared, err := s.Get(ctx, recs[0].ID)
	if err != nil || len(shared.Supports) != total.Corroborations {
		t.Errorf("shared record: %d supports, %v; want %d", len(shared.Supports), err, total.Corroborations)
	}
	led, err := s.Ledger(ctx, store.LedgerFilter{})
	if err != nil || len(led) != 1+total.Writes+total.Corroborations {
		t.Errorf("ledger: %d entries, %v; want %d", len(led), err, 1+total.Writes+total.Corroborations)
	}
	if err := s.Verify(ctx); err != nil {
		t.Errorf("verify: %v", err)
	}
}
