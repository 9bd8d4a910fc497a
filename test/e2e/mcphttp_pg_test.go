package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// alternating sends each HTTP request of one MCP client session to the
// next server in turn (no sticky sessions), with a bearer token.
type alternating struct {
	servers []*url.URL
	n       atomic.Int64
	secret  string
}

func (a *alternating) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	to := a.servers[int(a.n.Add(1))%len(a.servers)]
	r.URL.Scheme, r.URL.Host, r.Host = to.Scheme, to.Host, to.Host
	r.Header.Set("Authorization", "Bearer "+a.secret)
	return http.DefaultTransport.RoundTrip(r)
}

// uniqueFact is a fact sharing no word with another one of the run, so no
// save corroborates another.
func uniqueFact(r *rand.Rand) string {
	words := make([]string, 7)
	for i := range words {
		b := make([]byte, 7)
		for j := range b {
			b[j] = byte('a' + r.IntN(26))
		}
		words[i] = string(b)
	}
	return "Remember " + strings.Join(words, " ")
}

// TestMCPHTTPTwoServersPostgres: two `mcp --http` processes on one
// PostgreSQL store; four clients (two per agent), each one MCP session
// whose requests alternate between the servers, save 25 distinct facts
// each. Every save is answered "saved", each agent's store holds exactly
// its 50 records (no save lost or doubled), and the ledger verifies
// (`agent-ls memory ledger --verify`: 100 entries, chain intact, state
// matching its replay). Runs inside scripts/pg.sh (skips without a server,
// fails under CI=true).
func TestMCPHTTPTwoServersPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	t.Parallel()
	db := pgtest.Fresh(t)
	bin := binary
	dir := serviceWorkspace(t)
	k := newTokens(t, bin, dir)
	storeArgs := []string{"--store", db}
	if out, err := exec.Command(bin, "memory", "init", "--store", db).CombinedOutput(); err != nil {
		t.Fatalf("memory init: %v\n%s", err, out)
	}
	var servers []*url.URL
	var procs []*httpServer
	for range 2 {
		s := startHTTPServer(t, bin, dir, k.env(), storeArgs...)
		procs = append(procs, s)
		u, err := url.Parse(s.url)
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, u)
	}
	const clients, saves = 4, 25
	agents := []struct{ file, name string }{{"support.agent.yaml", "support-bot"}, {"deploy.agent.yaml", "deploy-ops"}}
	var wg sync.WaitGroup
	errs := make(chan error, clients*saves)
	for c := range clients {
		ag := agents[c%2]
		secret := k.create(t, ag.file, storeArgs...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 33))
			cl := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("client-%d", c), Version: "1"}, nil)
			cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: servers[0].String(),
				HTTPClient: &http.Client{Transport: &alternating{servers: servers, secret: secret}}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
			if err != nil {
				errs <- err
				return
			}
			defer cs.Close()
			for i := range saves {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_save",
					Arguments: map[string]any{"content": uniqueFact(r)},
					Meta:      mcp.Meta{"agent-ls/conversationId": fmt.Sprintf("conv-%d-%d", c, i)}})
				if err != nil {
					errs <- fmt.Errorf("client %d save %d: %w", c, i, err)
					continue
				}
				var out struct{ Status string }
				data, _ := json.Marshal(res.StructuredContent)
				_ = json.Unmarshal(data, &out)
				if res.IsError || out.Status != "saved" {
					errs <- fmt.Errorf("client %d save %d: %s %v", c, i, data, res.Content)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, p := range procs {
		// Each server answered a share of the saves (the alternation reached both).
		if n := strings.Count(p.stderr.String(), "tool=memory_save"); n < clients*saves/4 {
			t.Errorf("server %d answered %d saves, want about %d", i, n, clients*saves/2)
		} else {
			t.Logf("server %d answered %d saves", i, n)
		}
	}
	cli := func(args ...string) string {
		cmd := exec.Command(bin, append(args, storeArgs...)...)
		cmd.Dir, cmd.Env = dir, k.env()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("agent-ls %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	for _, ag := range agents {
		var list struct {
			Records []struct {
				Scope          map[string]string `json:"scope"`
				ConversationID string            `json:"conversationId"`
			} `json:"records"`
		}
		out := cli("memory", "list", "--scope", "agent="+ag.name, "--limit", "-1", "--format", "json")
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("memory list: %v\n%s", err, out)
		}
		if len(list.Records) != clients/2*saves {
			t.Errorf("agent %s: %d records, want %d", ag.name, len(list.Records), clients/2*saves)
		}
	}
	verify := cli("memory", "ledger", "--verify")
	// One entry per save and one per token created.
	m := regexp.MustCompile(`ledger ok: (\d+) entries`).FindStringSubmatch(verify)
	if n, _ := strconv.Atoi(m1(m)); n != clients*saves+clients {
		t.Errorf("ledger --verify: %s (want %d entries: %d saves, %d tokens)", verify, clients*saves+clients, clients*saves, clients)
	}
	t.Logf("%s", strings.TrimSpace(verify))
}

func m1(m []string) string {
	if len(m) < 2 {
		return ""
	}
	return m[1]
}
