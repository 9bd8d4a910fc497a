package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// benchClients is how many clients call at once.
const benchClients = 8

// BenchmarkMCPService: memory_save and compose from 8 concurrent clients
// against one agent-ls process, over streamable HTTP (`mcp --http`, one
// session per client with its token) and over stdio (`mcp AGENT_FILE`, the
// 8 clients' calls on one session, as a long-lived server serves a
// runtime), on the embedded bbolt store and on PostgreSQL (inside
// scripts/pg.sh; skipped without it). Reported per sub-benchmark: ops/s
// (saves/s or composes/s, wall clock over all clients) and p95-ms, the 95th
// percentile latency of one call. make bench runs it (scripts/bench.sh
// prints the rows).
func BenchmarkMCPService(b *testing.B) {
	bin := binary
	for _, backend := range []string{"bbolt", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			dir := serviceWorkspace(b)
			storeArgs := []string{"--store", filepath.Join(dir, "memory.db")}
			if backend == "postgres" {
				db := pgtest.Fresh(b)
				if out, err := exec.Command(bin, "memory", "init", "--store", db).CombinedOutput(); err != nil {
					b.Fatalf("memory init: %v\n%s", err, out)
				}
				storeArgs = []string{"--store", db}
			}
			k := newTokens(b, bin, dir)
			s := startHTTPServer(b, bin, dir, k.env(), storeArgs...)
			var httpSessions []*mcp.ClientSession
			for i := range benchClients {
				secret := k.create(b, "support.agent.yaml", storeArgs...)
				cl := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("bench-%d", i), Version: "1"}, nil)
				cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.url,
					HTTPClient: &http.Client{Transport: &alternating{servers: mustURLs(b, s.url), secret: secret}}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { cs.Close() })
				httpSessions = append(httpSessions, cs)
			}
			cmd := exec.Command(bin, append([]string{"mcp", filepath.Join(dir, "support.agent.yaml")}, storeArgs...)...)
			cmd.Dir = dir
			stdio, err := mcp.NewClient(&mcp.Implementation{Name: "bench-stdio", Version: "1"}, nil).
				Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { stdio.Close() })
			stdioSessions := slices.Repeat([]*mcp.ClientSession{stdio}, benchClients)
			for _, tr := range []struct {
				name     string
				sessions []*mcp.ClientSession
			}{{"http", httpSessions}, {"stdio", stdioSessions}} {
				b.Run(tr.name+"/save", func(b *testing.B) { benchCalls(b, tr.sessions, "memory_save") })
				b.Run(tr.name+"/compose", func(b *testing.B) { benchCalls(b, tr.sessions, "compose") })
			}
		})
	}
}

func mustURLs(b testing.TB, raw string) []*url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		b.Fatal(err)
	}
	return []*url.URL{u}
}

var saveSeq atomic.Int64

// benchCalls makes b.N calls of tool spread over the sessions' goroutines
// and reports ops/s and the p95 latency.
func benchCalls(b *testing.B, sessions []*mcp.ClientSession, tool string) {
	var next atomic.Int64
	lat := make([][]time.Duration, len(sessions))
	var wg sync.WaitGroup
	errs := make(chan error, len(sessions))
	b.ResetTimer()
	start := time.Now()
	for i, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(saveSeq.Add(1)), uint64(time.Now().UnixNano())))
			for next.Add(1) <= int64(b.N) {
				params := &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}}
				if tool == "memory_save" {
					params.Arguments = map[string]any{"content": uniqueFact(r)}
					params.Meta = mcp.Meta{"agent-ls/conversationId": fmt.Sprintf("bench-%d", saveSeq.Add(1))}
				}
				t0 := time.Now()
				res, err := cs.CallTool(context.Background(), params)
				lat[i] = append(lat[i], time.Since(t0))
				if err == nil && res.IsError {
					err = fmt.Errorf("%s: %v", tool, res.Content)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	p95 := all[(len(all)*95+99)/100-1]
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(p95.Microseconds())/1000, "p95-ms")
}
