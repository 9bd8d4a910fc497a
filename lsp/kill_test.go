package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/bbolt"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
)

// serveChildEnv makes TestServeChild run a language server on stdio.
const serveChildEnv = "AGENT_LS_SERVE_CHILD"

// lspKillsEnv sets TestSIGKILLServer's number of kills.
const lspKillsEnv = "AGENT_LS_LSP_KILLS"

// childStdio joins the child's stdin and stdout.
type childStdio struct {
	io.Reader
	io.Writer
}

func (childStdio) Close() error { return nil }

// TestServeChild is the child process of TestSIGKILLServer: the language
// server on stdio with the real store, as `agent-ls serve` runs it.
func TestServeChild(t *testing.T) {
	if os.Getenv(serveChildEnv) == "" {
		t.Skip("the child process of TestSIGKILLServer")
	}
	open := func(readOnly bool) func(ctx context.Context, path string) (store.Store, error) {
		return func(_ context.Context, path string) (store.Store, error) {
			return bolt.Open(path, store.Options{LockTimeout: 5 * time.Second, ReadOnly: readOnly})
		}
	}
	err := Serve(context.Background(), childStdio{os.Stdin, os.Stdout}, Options{
		OpenStore: open(false), OpenStoreReadOnly: open(true), NoWatch: true, Lint: LintEngine(),
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		t.Fatal(err)
	}
	os.Exit(0)
}

// pipeConn joins a child's stdout (read) and stdin (write).
type pipeConn struct {
	io.Reader
	io.WriteCloser
}

// TestSIGKILLServer: a language-server child process is killed with
// SIGKILL while it runs a stream of commands, AGENT_LS_LSP_KILLS times
// (default 10), on one store. Each round the test writes fresh candidates
// (earned, one conversation) and guarded proposals as the agent, starts
// the server, sends a promote for every candidate and an approve for every
// proposal (as human:ana) without waiting, and kills the server once a
// random number of them have been answered and up to 10 ms more, so the
// kill lands while the rest are in flight (sometimes after a command's
// commit and before its answer, which the test counts). After every kill: the store opens read-write and its
// ledger verifies; every command the server answered as done is in the
// store; the promoted records are exactly those the ledger replays to
// (StateAt now); each proposal is approved exactly when its record is
// promoted, and each candidate is promoted exactly when the ledger has its
// promote entry.
func TestSIGKILLServer(t *testing.T) {
	t.Parallel()
	kills := 10
	if v := os.Getenv(lspKillsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", lspKillsEnv, v)
		}
		kills = n
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))

	env := newTestEnv(t)
	text := deployText(t)
	path := env.write(t, "deploy.agent.yaml", text)
	_, cfg, _, err := schema.LoadAgent(path, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	agent := store.Actor{Kind: store.ActorAgent, Name: "deploy-ops"}
	ctx := context.Background()

	const perRound = 8 // candidates and proposals each
	inFlight := 0      // kills with commands sent but not answered
	unanswered := 0    // kills between a command's commit and its answer
	for round := range kills {
		// The agent learns: fresh candidates and guarded proposals.
		var cands, props, propRecs []string
		withBolt(t, env, func(st store.Store) {
			e := engine.NewAgent(engine.AgentSpec{Store: st, Agent: cfg})
			for i := range perRound {
				for _, x := range []struct{ target, content string }{
					{"judgment.deploy.heuristics", uniqueText(round, i, 0)},
					{"judgment.deploy.escalationTriggers", uniqueText(round, i, 1)},
				} {
					mt, err := schema.ParseTarget(x.target)
					if err != nil {
						t.Fatal(err)
					}
					res, err := e.Save(ctx, engine.SaveRequest{Kind: schema.KindFact, Content: x.content, Target: &mt,
						Provenance: schema.Provenance{ConversationID: fmt.Sprintf("conv-%d-%d", round, i)}, Actor: agent})
					if err != nil {
						t.Fatal(err)
					}
					switch {
					case res.ProposalID != "":
						props = append(props, res.ProposalID)
						propRecs = append(propRecs, res.Record.ID)
					case res.State == engine.StateCandidate:
						cands = append(cands, res.Record.ID)
					default:
						t.Fatalf("save %q: %+v", x.content, res)
					}
				}
			}
		})

		cmd := exec.Command(os.Args[0], "-test.run=^TestServeChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), serveChildEnv+"=1")
		cmd.Dir = env.root
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cmd.WaitDelay = 10 * time.Second // a pipe held open elsewhere must not hang Wait
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		conn := jsonrpc2.NewConn(jsonrpc2.NewStream(pipeConn{stdout, stdin}))
		cctx, cancel := context.WithCancel(ctx)
		conn.Go(cctx, func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
			return reply(ctx, nil, nil)
		})
		call := func(method string, params, result any) error {
			// cctx ends with the kill: calls in flight then return.
			c, stop := context.WithTimeout(cctx, failsafe)
			defer stop()
			_, err := conn.Call(c, method, params, result)
			return err
		}
		root := string(pathToURI(env.root))
		if err := call(protocol.MethodInitialize, map[string]any{"processId": os.Getpid(), "rootUri": root, "capabilities": map[string]any{},
			"workspaceFolders":      []any{map[string]any{"uri": root, "name": "ws"}},
			"initializationOptions": map[string]any{"actor": "human:ana"}}, nil); err != nil {
			t.Fatalf("round %d: initialize: %v\n%s", round, err, stderr.String())
		}
		uri := pathToURI(path)
		_ = conn.Notify(ctx, protocol.MethodInitialized, map[string]any{})
		_ = conn.Notify(ctx, protocol.MethodTextDocumentDidOpen, map[string]any{"textDocument": map[string]any{
			"uri": uri, "languageId": "yaml", "version": 1, "text": text}})

		// Every command at once; the kill comes after a random number of
		// answers (and a random part of a millisecond more).
		type job struct{ command, id string }
		var jobs []job
		for i := range perRound {
			jobs = append(jobs, job{CommandPromote, cands[i]}, job{CommandApprove, props[i]})
		}
		killAfter := 1 + rng.IntN(len(jobs)-1)
		var mu sync.Mutex
		answered := 0
		done := map[string]bool{} // ids whose command answered OK
		reached := make(chan struct{})
		var wg sync.WaitGroup
		for _, j := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				arg := map[string]any{"uri": uri, "recordId": j.id}
				if j.command == CommandApprove {
					arg = map[string]any{"uri": uri, "proposalId": j.id}
				}
				var out CommandResult
				err := call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": j.command, "arguments": []any{arg}}, &out)
				mu.Lock()
				defer mu.Unlock()
				if err == nil && out.OK {
					done[j.id] = true
				}
				if err == nil {
					answered++
					if answered == killAfter {
						close(reached)
					}
				}
			}()
		}
		select {
		case <-reached:
		case <-time.After(failsafe):
			t.Fatalf("round %d: %d answers, waited for %d\n%s", round, answered, killAfter, stderr.String())
		}
		time.Sleep(time.Duration(rng.IntN(10000)) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		cancel()
		_ = conn.Close()
		wg.Wait()
		mu.Lock()
		acked := len(done)
		gotAnswers := answered
		mu.Unlock()
		if gotAnswers < len(jobs) {
			inFlight++
		}

		// The store after the kill.
		st, err := bolt.Open(env.storePath, store.Options{LockTimeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("round %d: open after the kill: %v", round, err)
		}
		if err := st.Verify(ctx); err != nil {
			t.Fatalf("round %d: ledger after the kill: %v", round, err)
		}
		promoted := map[string]bool{}
		recs, err := st.Promoted(ctx, nil, "deploy-ops")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			promoted[r.ID] = true
		}
		replayed := map[string]bool{}
		all, err := st.StateAt(ctx, schema.FormatTime(time.Now().Add(time.Hour)))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range all {
			if r.Scope[store.AgentKey] == "deploy-ops" {
				replayed[r.ID] = true
			}
		}
		if got, want := sortedKeys(promoted), sortedKeys(replayed); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d: promoted records %v, the ledger replays to %v", round, got, want)
		}
		promoteEntries := map[string]bool{}
		es, err := st.Ledger(ctx, store.LedgerFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.Op == store.OpPromote {
				promoteEntries[e.RecordID] = true
			}
		}
		applied := 0 // commands the store shows done
		for i := range perRound {
			if promoted[cands[i]] {
				applied++
			}
			if promoted[propRecs[i]] {
				applied++
			}
			if done[cands[i]] && !promoted[cands[i]] {
				t.Errorf("round %d: promote of %s was answered but the record is not promoted", round, cands[i])
			}
			if promoted[cands[i]] != promoteEntries[cands[i]] {
				t.Errorf("round %d: candidate %s promoted %v, promote entry %v", round, cands[i], promoted[cands[i]], promoteEntries[cands[i]])
			}
			p, err := st.GetProposal(ctx, props[i])
			if err != nil {
				t.Fatalf("round %d: proposal %s: %v", round, props[i], err)
			}
			if done[props[i]] && p.State != store.ProposalApproved {
				t.Errorf("round %d: approve of %s was answered but it is %s", round, props[i], p.State)
			}
			if (p.State == store.ProposalApproved) != promoted[propRecs[i]] {
				t.Errorf("round %d: proposal %s is %s but its record promoted is %v", round, props[i], p.State, promoted[propRecs[i]])
			}
		}
		_ = st.Close()
		if applied > acked {
			unanswered++
		}
		t.Logf("round %d: killed after %d of %d answers (%d ok); the store shows %d done", round, gotAnswers, len(jobs), acked, applied)
	}
	t.Logf("%d kills: %d with commands in flight, %d after a commit and before its answer", kills, inFlight, unanswered)
	if inFlight == 0 {
		t.Errorf("no kill landed while commands were in flight")
	}
}

// uniqueText is five made-up words that no other (round, i, kind) shares,
// so that no two saves are near-duplicates of each other.
func uniqueText(round, i, kind int) string {
	var words []string
	for k := range 5 {
		n := ((round*64+i)*2+kind)*5 + k
		w := []byte{'z'}
		for n > 0 || len(w) < 4 {
			w = append(w, byte('a'+n%26))
			n /= 26
		}
		words = append(words, string(w))
	}
	return strings.Join(words, " ")
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// lockChildEnv makes TestLockChild hold the bbolt lock of the named file.
const lockChildEnv = "AGENT_LS_LOCK_CHILD"

// TestLockChild is the child process of TestLockedStoreCommands: it opens
// the store file with bbolt (an exclusive lock), says so, and holds it until
// its stdin closes.
func TestLockChild(t *testing.T) {
	path := os.Getenv(lockChildEnv)
	if path == "" {
		t.Skip("the child process of TestLockedStoreCommands")
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = db.Close()
	os.Exit(0)
}

// TestLockedStoreCommands: while another process holds the store's lock,
// every command (promote, demote, invalidate, supersede, approve, reject,
// adopt, retarget) and the composedPrompt, proposals and learnings
// requests answer -32011 saying the store is locked and naming the file
// (the opener's lock timeout is 200 ms; a hang would fail at the failsafe),
// adopt asks the editor for no edit, and the file is unchanged; once the
// other process lets go, the same promote succeeds.
func TestLockedStoreCommands(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	text := deployText(t)
	path := env.write(t, "deploy.agent.yaml", text)
	fact := agentSave(t, env, text, "Deploys go out Tuesdays", "background.projectContext.deploy_window", "conv-1")
	other := agentSave(t, env, text, "Deploys go out Thursdays", "background.projectContext.release_day", "conv-2")
	cand := agentSave(t, env, text, uniqueText(0, 0, 0), "judgment.deploy.heuristics", "conv-3")
	prop := agentSave(t, env, text, trigger, "judgment.deploy.escalationTriggers", "conv-4")
	if cand.State != engine.StateCandidate || prop.ProposalID == "" {
		t.Fatalf("setup: %+v %+v", cand, prop)
	}
	before, err := os.ReadFile(env.storePath)
	if err != nil {
		t.Fatal(err)
	}

	holder := exec.Command(os.Args[0], "-test.run=^TestLockChild$", "-test.count=1")
	holder.Env = append(os.Environ(), lockChildEnv+"="+env.storePath)
	release, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = release.Close(); _ = holder.Wait() })
	line := make([]byte, len("locked\n"))
	if _, err := io.ReadFull(out, line); err != nil || string(line) != "locked\n" {
		t.Fatalf("lock holder: %q, %v", line, err)
	}

	// boltOpener's lock timeout is 200 ms.
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
	c.initialize(env.root, map[string]any{"actor": "human:ana"}, false)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	locked := func(what string, err error) {
		t.Helper()
		var je *jsonrpc2.Error
		if !errors.As(err, &je) || je.Code != codeStoreUnavailable || !strings.Contains(je.Message, "locked") || !strings.Contains(je.Message, env.storePath) {
			t.Errorf("%s: %v; want -32011 saying %s is locked", what, err, env.storePath)
		}
	}
	promote := map[string]any{"uri": uri, "recordId": cand.Record.ID}
	for _, cmd := range []struct {
		command string
		args    map[string]any
	}{
		{CommandPromote, promote},
		{CommandDemote, map[string]any{"uri": uri, "recordId": fact.Record.ID, "reason": "r"}},
		{CommandInvalidate, map[string]any{"uri": uri, "recordId": fact.Record.ID, "reason": "r"}},
		{CommandSupersede, map[string]any{"uri": uri, "keepId": other.Record.ID, "dropId": fact.Record.ID}},
		{CommandApprove, map[string]any{"uri": uri, "proposalId": prop.ProposalID}},
		{CommandReject, map[string]any{"uri": uri, "proposalId": prop.ProposalID, "reason": "no"}},
		{CommandAdopt, map[string]any{"uri": uri, "recordId": fact.Record.ID}},
		{CommandRetarget, map[string]any{"uri": uri, "recordId": cand.Record.ID, "target": "judgment.incident.heuristics"}},
	} {
		var res CommandResult
		locked(cmd.command, c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": cmd.command, "arguments": []any{cmd.args}}, &res))
	}
	for _, req := range []struct {
		method string
		params map[string]any
	}{
		{methodComposedPrompt, map[string]any{"uri": uri}},
		{methodProposals, map[string]any{"uri": uri}},
		{methodLearnings, map[string]any{"uri": uri, "since": "30d"}},
	} {
		var res json.RawMessage
		locked(req.method, c.callErr(req.method, req.params, &res))
	}
	if calls := callsOf(c, methodApplyEdit); len(calls) != 0 {
		t.Errorf("adopt asked for an edit from a locked store: %s", calls)
	}
	if now, err := os.ReadFile(env.storePath); err != nil || string(now) != string(before) {
		t.Errorf("the locked store changed (%v)", err)
	}

	if err := release.Close(); err != nil {
		t.Fatal(err)
	}
	if err := holder.Wait(); err != nil {
		t.Fatalf("lock holder: %v", err)
	}
	var res CommandResult
	c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": CommandPromote, "arguments": []any{promote}}, &res)
	if !res.OK || res.Status != string(engine.StatusPromoted) {
		t.Errorf("promote after the lock's release: %+v", res)
	}
}
