package lsp

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// storeAt saves content as the agent of agentText into a fresh store at
// path (outside the watched store directory), so it can be moved into place.
func storeAt(t *testing.T, path, agentText, content, key, conv string) {
	t.Helper()
	agentSave(t, &testEnv{root: filepath.Dir(path), storePath: path}, agentText, content, "background.projectContext."+key, conv)
}

// statusCount counts agent-ls/status notifications of uri in state.
func statusCount(ns []note, uri protocol.DocumentURI, state StoreState) int {
	n := 0
	for _, x := range ns {
		var s Status
		if x.method == methodStatus && json.Unmarshal(x.params, &s) == nil && s.URI == uri && s.Store == state {
			n++
		}
	}
	return n
}

// warningsWith counts window/showMessage warnings containing text.
func warningsWith(c *testClient, text string) int {
	n := 0
	for _, p := range c.notesOf(protocol.MethodWindowShowMessage) {
		if strings.Contains(string(p), text) {
			n++
		}
	}
	return n
}

// TestStoreGoneAndReplaced: with the file watcher on, the store directory
// is deleted, then a store is moved back in, then the store file is renamed
// over by a fresh store, by a file that is not a database and by a store
// again, while the server runs. Each time the server notices without an
// edit (a status change, driven by the watcher), keeps publishing
// diagnostics, and its hints show exactly the records of the store now in
// place (none while it is gone or corrupt). The deletion and the corrupt
// file each give exactly one warning; a healthy replacement gives none.
func TestStoreGoneAndReplaced(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	text := deployText(t)
	path := env.write(t, "deploy.agent.yaml", text)
	storeAt(t, env.storePath, text, "Deploys go out Mondays", "deploy_window", "conv-1")
	spare := t.TempDir() // fresh stores and files are made here, then moved in

	// Wired as agent-ls serve does: reads open read-only. With only the
	// read-write opener, a read racing the deletion below re-created the
	// file (bolt.Open creates a missing store) and RemoveAll failed with
	// "directory not empty".
	c := startServer(t, Options{OpenStore: boltOpener(time.Now), OpenStoreReadOnly: boltReadOnlyOpener(time.Now)})
	c.initialize(env.root, nil, true)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	c.waitFor("connected status", func(ns, _ []note) bool { return statusCount(ns, uri, StoreConnected) > 0 })

	version := 1
	// edit sends a change and waits for its diagnostics: they keep coming
	// whatever the store's state.
	edit := func(stage string) {
		t.Helper()
		version++
		c.change(uri, text, version)
		if d := c.awaitDiagnostics(uri, int32(version)); len(d.Diagnostics) != 0 {
			t.Errorf("%s: diagnostics of v%d: %+v", stage, version, d.Diagnostics)
		}
	}
	// expectHints asserts the hints show want and none of the others.
	all := []string{"Mondays", "Tuesdays", "Wednesdays", "Thursdays"}
	expectHints := func(stage, want string) {
		t.Helper()
		hs := c.hints(uri)
		for _, day := range all {
			h := hintWith(hs, day)
			if day == want && (h == nil || !strings.HasPrefix(h.Label, "+ ")) {
				t.Errorf("%s: no promoted hint for %q in %+v", stage, day, hs)
			}
			if day != want && h != nil {
				t.Errorf("%s: hint %q from a store no longer in place", stage, h.Label)
			}
		}
		if want == "" && len(hs) != 0 {
			t.Errorf("%s: hints without a store: %+v", stage, hs)
		}
	}
	// awaitState waits until the server has reported uri in state one more
	// time than before the fault (the watcher re-ran the file).
	awaitState := func(stage string, state StoreState, before int) {
		t.Helper()
		c.waitFor(stage+": "+string(state)+" status", func(ns, _ []note) bool { return statusCount(ns, uri, state) > before })
	}
	moveIn := func(src string) {
		t.Helper()
		if err := os.Rename(src, env.storePath); err != nil {
			t.Fatal(err)
		}
	}
	expectHints("start", "Mondays")

	// 1. The store directory is deleted.
	missing := countOf(c, uri, StoreMissing)
	if err := os.RemoveAll(filepath.Dir(env.storePath)); err != nil {
		t.Fatal(err)
	}
	awaitState("directory deleted", StoreMissing, missing)
	edit("directory deleted")
	expectHints("directory deleted", "")
	if fileExists(filepath.Dir(env.storePath)) {
		t.Errorf("the server re-created the deleted store directory")
	}

	// 2. A store is moved back into a new directory.
	storeAt(t, filepath.Join(spare, "tuesday.db"), text, "Deploys go out Tuesdays", "deploy_window", "conv-2")
	connected := countOf(c, uri, StoreConnected)
	if err := os.Mkdir(filepath.Dir(env.storePath), 0o755); err != nil {
		t.Fatal(err)
	}
	moveIn(filepath.Join(spare, "tuesday.db"))
	awaitState("store back", StoreConnected, connected)
	edit("store back")
	expectHints("store back", "Tuesdays")

	// 3. The store file is renamed over by a fresh store: no state change,
	// so the watcher's re-run shows as an inlay hint refresh.
	storeAt(t, filepath.Join(spare, "wednesday.db"), text, "Deploys go out Wednesdays", "deploy_window", "conv-3")
	refreshes := c.refreshCount()
	moveIn(filepath.Join(spare, "wednesday.db"))
	c.awaitRefresh(refreshes)
	edit("replaced by a store")
	expectHints("replaced by a store", "Wednesdays")

	// 4. Renamed over by a file that is not a database.
	junk := filepath.Join(spare, "junk.db")
	if err := os.WriteFile(junk, []byte(strings.Repeat("not a bbolt file\n", 512)), 0o644); err != nil {
		t.Fatal(err)
	}
	corrupt := countOf(c, uri, StoreCorrupt)
	moveIn(junk)
	awaitState("replaced by junk", StoreCorrupt, corrupt)
	edit("replaced by junk")
	expectHints("replaced by junk", "")

	// 5. A store again.
	storeAt(t, filepath.Join(spare, "thursday.db"), text, "Deploys go out Thursdays", "deploy_window", "conv-4")
	connected = countOf(c, uri, StoreConnected)
	moveIn(filepath.Join(spare, "thursday.db"))
	awaitState("store again", StoreConnected, connected)
	edit("store again")
	expectHints("store again", "Thursdays")

	if n := warningsWith(c, "is gone"); n != 1 {
		t.Errorf("%d warnings that the store is gone, want exactly 1", n)
	}
	if n := warningsWith(c, "corrupt"); n != 1 {
		t.Errorf("%d corrupt warnings, want exactly 1", n)
	}
	if n := len(c.notesOf(protocol.MethodWindowShowMessage)); n != 2 {
		t.Errorf("%d warnings in all, want 2: %s", n, c.notesOf(protocol.MethodWindowShowMessage))
	}
}

func countOf(c *testClient, uri protocol.DocumentURI, state StoreState) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return statusCount(c.notes, uri, state)
}

// TestCorruptStoreCommandsWriteNothing: with the store file not a
// database or truncated to half, every command
// (promote, demote, invalidate, supersede, approve, reject, adopt, retarget) answers
// a store-unavailable error naming the file and saying it is corrupt, the
// read requests (composed prompt, proposals, learnings) do too, hints,
// hover and code lenses answer without memory, edits keep their
// diagnostics, adopt asks the editor for no edit, and no byte of the file
// changes (checksum before and after each message). With four scrambled
// data pages (leaves of the records bucket that hold none of the records
// the commands name, so no command reads them) every command still answers
// the corrupt-store error naming the file (the store checks the whole page
// tree before a write) and nothing is written; reads of intact pages may
// then answer, so they are only required not to write.
func TestCorruptStoreCommandsWriteNothing(t *testing.T) {
	t.Parallel()
	damages := []struct {
		name      string
		damage    func(t *testing.T, path string)
		dataPages bool // only pages the commands do not read are damaged
	}{
		{"not a database", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(strings.Repeat("not a bbolt file\n", 512)), 0o644); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"truncated to half", func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"four scrambled data pages", scrambleRecordLeaves, true},
	}
	src, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t)
			path := env.write(t, "deploy.agent.yaml", text)
			fact := agentSave(t, env, text, "Deploys go out Tuesdays", "background.projectContext.deploy_window", "conv-1")
			other := agentSave(t, env, text, "Deploys go out Thursdays", "background.projectContext.release_day", "conv-2")
			cand := agentSave(t, env, text, "Pause the rollout when the queue doubles", "judgment.deploy.heuristics", "conv-3")
			prop := agentSave(t, env, text, trigger, "judgment.deploy.escalationTriggers", "conv-4")
			if prop.ProposalID == "" {
				t.Fatalf("guarded save made no proposal: %+v", prop)
			}
			// Bulk, so that the file has data pages worth damaging.
			withBolt(t, env, func(st store.Store) {
				var reqs []store.WriteRequest
				for i := range 200 {
					reqs = append(reqs, store.WriteRequest{Scope: map[string]string{store.AgentKey: "deploy-ops"}, Kind: schema.KindEpisode,
						Content: fmt.Sprintf("episode %03d %s", i, strings.Repeat("y", 200))})
				}
				if _, err := st.Write(context.Background(), reqs, store.Actor{Kind: store.ActorAgent, Name: "deploy-ops"}); err != nil {
					t.Fatal(err)
				}
			})
			d.damage(t, env.storePath)
			sum := func() [32]byte {
				data, err := os.ReadFile(env.storePath)
				if err != nil {
					t.Fatal(err)
				}
				return sha256.Sum256(data)
			}
			before := sum()

			c := startServer(t, Options{OpenStore: boltOpener(time.Now)})
			c.initialize(env.root, map[string]any{"actor": "human:ana"}, true)
			uri := c.open(path, text, 1)
			c.awaitDiagnostics(uri, 1)
			unchanged := func(what string) {
				t.Helper()
				if sum() != before {
					t.Fatalf("%s wrote to the corrupt store", what)
				}
			}
			unchanged("didOpen")
			storeErr := func(what string, err error) {
				t.Helper()
				var je *jsonrpc2.Error
				if !errors.As(err, &je) || je.Code != codeStoreUnavailable || !strings.Contains(je.Message, "corrupt") || !strings.Contains(je.Message, env.storePath) {
					t.Errorf("%s: %v; want code %d saying the store %s is corrupt", what, err, codeStoreUnavailable, env.storePath)
				}
			}
			for _, cmd := range []struct {
				command string
				args    map[string]any
			}{
				{CommandPromote, map[string]any{"recordId": cand.Record.ID}},
				{CommandDemote, map[string]any{"recordId": fact.Record.ID, "reason": "wrong"}},
				{CommandInvalidate, map[string]any{"recordId": fact.Record.ID, "reason": "wrong"}},
				{CommandSupersede, map[string]any{"keepId": other.Record.ID, "dropId": fact.Record.ID}},
				{CommandApprove, map[string]any{"proposalId": prop.ProposalID}},
				{CommandReject, map[string]any{"proposalId": prop.ProposalID, "reason": "no"}},
				{CommandAdopt, map[string]any{"recordId": fact.Record.ID}},
				{CommandRetarget, map[string]any{"recordId": cand.Record.ID, "target": "judgment.incident.heuristics"}},
			} {
				cmd.args["uri"] = uri
				var out CommandResult
				err := c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": cmd.command, "arguments": []any{cmd.args}}, &out)
				storeErr(cmd.command, err)
				unchanged(cmd.command)
			}
			for _, req := range []struct {
				method string
				params map[string]any
			}{
				{methodComposedPrompt, map[string]any{"uri": uri}},
				{methodProposals, map[string]any{"uri": uri}},
				{methodLearnings, map[string]any{"uri": uri, "since": "30d"}},
			} {
				var out json.RawMessage
				if err := c.callErr(req.method, req.params, &out); !d.dataPages {
					storeErr(req.method, err)
				}
				unchanged(req.method)
			}
			if hs := c.hints(uri); len(hs) != 0 && !d.dataPages {
				t.Errorf("hints from a corrupt store: %+v", hs)
			}
			var hover *protocol.Hover
			c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": uri},
				"position": map[string]any{"line": 22, "character": 8}}, &hover)
			if hover != nil && strings.Contains(hover.Contents.Value, "Tuesdays") && !d.dataPages {
				t.Errorf("hover shows a record of the corrupt store: %s", hover.Contents.Value)
			}
			var lenses []protocol.CodeLens
			c.call(protocol.MethodTextDocumentCodeLens, map[string]any{"textDocument": map[string]any{"uri": uri}}, &lenses)
			unchanged("hover, hints and code lenses")
			c.change(uri, text+"# edit\n", 2)
			c.awaitDiagnostics(uri, 2)
			unchanged("didChange")
			c.mu.Lock()
			for _, call := range c.calls {
				if call.method == methodApplyEdit {
					t.Errorf("adopt asked the editor to apply an edit from a corrupt store: %s", call.params)
				}
			}
			c.mu.Unlock()
		})
	}
}

// scrambleRecordLeaves overwrites four leaves of the records bucket (the
// second to the fifth child of its branch root, found with bbolt on the
// intact file) with random bytes, header and contents.
func scrambleRecordLeaves(t *testing.T, path string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var root int
	_ = db.View(func(tx *bbolt.Tx) error { root = int(tx.Bucket([]byte("records")).Root()); return nil })
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := os.Getpagesize()
	page := data[root*ps : (root+1)*ps]
	if flags, count := binary.LittleEndian.Uint16(page[8:]), int(binary.LittleEndian.Uint16(page[10:])); flags != 0x01 || count < 6 {
		t.Fatalf("records root page %d: flags %#x, %d children; want a branch of at least 6", root, flags, count)
	}
	r := rand.New(rand.NewSource(5))
	for i := 1; i <= 4; i++ {
		// Branch elements follow the 16-byte header: pos, ksize u32, pgid u64.
		child := int(binary.LittleEndian.Uint64(page[16+i*16+8:]))
		r.Read(data[child*ps : (child+1)*ps])
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// settledGoroutines polls runtime.NumGoroutine until ok accepts it or the
// failsafe passes (a bound on failure, not a timing assertion), and
// returns the last count.
func settledGoroutines(ok func(n int) bool) (int, bool) {
	deadline := time.Now().Add(failsafe)
	for {
		n := runtime.NumGoroutine()
		if ok(n) {
			return n, true
		}
		if time.Now().After(deadline) {
			return n, false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// heapAfterGC is the live heap after two collections (the second frees what
// the first's finalizers released).
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestDidChangeBurst: 1,000 didChange messages on one file (versions
// 112..1111, after a warm-up) sent back to back without waiting for any diagnostics, against a
// real store and the lint engine. Every version's text carries its own
// unknown key, so each publish shows which version's text it checked. The
// last publish is of version 1001; versions never go backwards; every
// publish of version v names v's key and no other; afterwards goroutines
// come back to the count before the burst (within 2) and the live heap to
// within 1 MiB of it. The server's in-process, so runtime.NumGoroutine and
// the heap include its goroutines and allocations; the client's record of
// the notifications is dropped before the heap is measured.
//
// The heap tolerance: the burst sends 1,000 texts of ~3.7 KB, and each run
// parses the text into a document of several times that, so keeping one
// text per change would hold ~3.7 MB and one parse per change far more; 1
// MiB is GC and allocator noise (measured -5 KB..+420 KB, with -race) with room, and
// still fails a leak of ~1 KB per change.
func TestDidChangeBurst(t *testing.T) {
	const burst = 1000
	env := newTestEnv(t)
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base := string(data)
	textOf := func(v int) string { return base + fmt.Sprintf("unknownKey%04d: x\n", v) }
	path := env.write(t, "deploy.agent.yaml", textOf(1))
	agentSave(t, env, base, "Deploys go out Tuesdays", "background.projectContext.deploy_window", "conv-1")
	// Warnings only: a debug log of every message would dominate the heap.
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now), Lint: LintEngine(), Logger: logger})
	c.initialize(env.root, nil, false)
	uri := c.open(path, textOf(1), 1)
	c.awaitDiagnostics(uri, 1)
	// Warm up (lazy caches, pools, buffers grown by a burst), then measure:
	// 10 changes one at a time, then 100 back to back.
	for v := 2; v <= 11; v++ {
		c.change(uri, textOf(v), v)
		c.awaitDiagnostics(uri, int32(v))
	}
	for v := 12; v <= 111; v++ {
		c.change(uri, textOf(v), v)
	}
	c.awaitDiagnostics(uri, 111)
	// Settled: the same count on consecutive polls.
	prev := -1
	baseG, ok := settledGoroutines(func(n int) bool { same := n == prev; prev = n; return same })
	if !ok {
		t.Fatalf("goroutines never settled before the burst (%d)", baseG)
	}
	c.mu.Lock()
	c.notes = nil
	c.mu.Unlock()
	baseHeap := heapAfterGC()

	first := 112
	last := first + burst - 1
	for v := first; v <= last; v++ {
		c.change(uri, textOf(v), v)
	}
	c.awaitDiagnostics(uri, int32(last))
	// The last run's lint pass and status follow its quick publish: wait
	// for the goroutines to come back before reading the record.
	n, _ := settledGoroutines(func(n int) bool { return n <= baseG })
	if n > baseG+2 {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines: %d before the burst, %d after it settled; stacks:\n%s", baseG, n, buf[:runtime.Stack(buf, true)])
	}
	ds := c.diagnostics(uri)
	if len(ds) == 0 || ds[len(ds)-1].Version != int32(last) {
		t.Fatalf("last publish is not of v%d: %d publishes", last, len(ds))
	}
	maxV := int32(0)
	for i, d := range ds {
		if d.Version < maxV {
			t.Fatalf("publish %d is of v%d after a publish of v%d", i, d.Version, maxV)
		}
		maxV = d.Version
		want := fmt.Sprintf(`"unknownKey%04d"`, d.Version)
		found := false
		for _, dg := range d.Diagnostics {
			if strings.Contains(dg.Message, "unknownKey") {
				if !strings.Contains(dg.Message, want) {
					t.Fatalf("publish of v%d has %q", d.Version, dg.Message)
				}
				found = true
			}
		}
		if !found {
			t.Fatalf("publish of v%d lacks its own unknown key: %+v", d.Version, d.Diagnostics)
		}
	}
	c.mu.Lock()
	c.notes = nil
	c.mu.Unlock()
	heap := heapAfterGC()
	grew := int64(heap) - int64(baseHeap)
	t.Logf("%d changes: %d publishes; goroutines %d -> %d; live heap %d -> %d bytes (%+d)", burst, len(ds), baseG, n, baseHeap, heap, grew)
	if grew > 1<<20 {
		t.Errorf("live heap grew by %d bytes over the burst (tolerance 1 MiB)", grew)
	}
}

// storeState is what a refused command must leave alone: each agent's
// promoted records and the ledger.
type storeState struct {
	promoted map[string][]string // agent -> promoted record ids
	ops      []store.Op          // the ledger's operations, oldest first
	pending  int                 // pending proposals
}

func stateOf(t *testing.T, env *testEnv, agents ...string) storeState {
	t.Helper()
	s := storeState{promoted: map[string][]string{}}
	withBolt(t, env, func(st store.Store) {
		ctx := context.Background()
		for _, a := range agents {
			recs, err := st.Promoted(ctx, nil, a)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				s.promoted[a] = append(s.promoted[a], r.ID)
			}
		}
		es, err := st.Ledger(ctx, store.LedgerFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			s.ops = append(s.ops, e.Op)
		}
		ps, err := st.Proposals(ctx, store.ProposalFilter{State: store.ProposalPending})
		if err != nil {
			t.Fatal(err)
		}
		s.pending = len(ps)
	})
	return s
}

// TestAgentActorThroughLSP: a workspace whose .agent-ls.yaml makes the
// actor agent:deploy-ops runs every command on its agent's file against a
// store that also holds agent spy-ops's records. Approving or rejecting
// is refused; promoting an earned candidate without support or a guarded
// one, and demoting, invalidating, superseding or adopting a promoted
// guarded record, is refused or only opens a proposal (no promotion
// changes; the ledger gains nothing but propose entries); commands on
// spy-ops's records answer "not found" and change nothing, and adopt never
// sends its text to the editor. No response about deploy-ops's file (hints,
// resolved hints, hover on every line, code actions, code lenses, composed
// prompt, proposals, learnings, diagnostics) contains spy-ops's content,
// and composing with another project's scope is refused;
// opening spy-ops's own file as agent:deploy-ops shows none of it either and
// its requests are refused. There is no delete command.
func TestAgentActorThroughLSP(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	text := deployText(t)
	spyText := strings.Replace(text, "name: deploy-ops", "name: spy-ops", 1)
	env.write(t, ".agent-ls.yaml", "actor: agent:deploy-ops\n")
	path := env.write(t, "deploy.agent.yaml", text)
	spyPath := env.write(t, "spy.agent.yaml", spyText)

	fact := agentSave(t, env, text, "Deploys go out Tuesdays", "background.projectContext.deploy_window", "conv-1")
	cand := agentSave(t, env, text, "Pause the rollout when the queue doubles", "judgment.deploy.heuristics", "conv-2")
	pend := agentSave(t, env, text, "Ask before a schema migration", "judgment.deploy.escalationTriggers", "conv-3")
	guard := agentSave(t, env, text, trigger, "judgment.deploy.escalationTriggers", "conv-4")
	if cand.State != engine.StateCandidate || pend.ProposalID == "" || guard.ProposalID == "" {
		t.Fatalf("setup: candidate %+v, pending %+v, guarded %+v", cand, pend, guard)
	}
	_, cfg, _, err := schema.LoadAgent(path, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	withBolt(t, env, func(st store.Store) {
		if _, err := engine.NewAgent(engine.AgentSpec{Store: st, Agent: cfg}).Approve(context.Background(), guard.ProposalID, store.Actor{Kind: store.ActorHuman, Name: "ana"}, "ok"); err != nil {
			t.Fatal(err)
		}
	})
	const secret = "SPYSECRET"
	spyFact := agentSave(t, env, spyText, secret+" fact", "background.projectContext.spy_window", "conv-5")
	spyCand := agentSave(t, env, spyText, secret+" lesson", "judgment.deploy.heuristics", "conv-6")
	spyPend := agentSave(t, env, spyText, secret+" trigger", "judgment.deploy.escalationTriggers", "conv-7")
	if spyFact.State != engine.StatePromoted || spyPend.ProposalID == "" {
		t.Fatalf("setup spy: %+v %+v", spyFact, spyPend)
	}
	agents := []string{"deploy-ops", "spy-ops"}

	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now), Lint: LintEngine()})
	c.initializeResolving(env.root, nil, false)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)

	exec := func(command string, args map[string]any) (CommandResult, error) {
		args["uri"] = uri
		var out CommandResult
		err := c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": command, "arguments": []any{args}}, &out)
		return out, err
	}
	codeOf := func(err error) jsonrpc2.Code {
		var je *jsonrpc2.Error
		if errors.As(err, &je) {
			return je.Code
		}
		return 0
	}
	const (
		refused           = "refused"
		refusedOrProposal = "refused or a proposal"
		notFound          = "not found"
		// Retargeting writes the record anew at its target (a write) and
		// retires the guarded original only through a proposal.
		retargetGuarded = "a new candidate, the original kept"
	)
	for _, tt := range []struct {
		name    string
		command string
		args    map[string]any
		want    string
	}{
		{"approve", CommandApprove, map[string]any{"proposalId": pend.ProposalID}, refused},
		{"reject", CommandReject, map[string]any{"proposalId": pend.ProposalID, "reason": "no"}, refused},
		{"promote earned without support", CommandPromote, map[string]any{"recordId": cand.Record.ID}, refusedOrProposal},
		{"promote guarded", CommandPromote, map[string]any{"recordId": pend.Record.ID}, refusedOrProposal},
		{"demote guarded", CommandDemote, map[string]any{"recordId": guard.Record.ID, "reason": "r"}, refusedOrProposal},
		{"invalidate guarded", CommandInvalidate, map[string]any{"recordId": guard.Record.ID, "reason": "r"}, refusedOrProposal},
		{"supersede guarded", CommandSupersede, map[string]any{"keepId": fact.Record.ID, "dropId": guard.Record.ID}, refusedOrProposal},
		{"adopt guarded", CommandAdopt, map[string]any{"recordId": guard.Record.ID}, refused},
		// Another agent's ids answer exactly like missing ones (issue 19 item 7).
		{"approve another agent's proposal", CommandApprove, map[string]any{"proposalId": spyPend.ProposalID}, notFound},
		{"approve a missing proposal", CommandApprove, map[string]any{"proposalId": "01JYYYYYYYYYYYYYYYYYYYYYYY"}, notFound},
		{"reject another agent's proposal", CommandReject, map[string]any{"proposalId": spyPend.ProposalID, "reason": "no"}, notFound},
		{"reject a missing proposal", CommandReject, map[string]any{"proposalId": "01JYYYYYYYYYYYYYYYYYYYYYYY", "reason": "no"}, notFound},
		{"promote a missing record", CommandPromote, map[string]any{"recordId": "01JYYYYYYYYYYYYYYYYYYYYYYY"}, notFound},
		{"promote another agent's candidate", CommandPromote, map[string]any{"recordId": spyCand.Record.ID}, notFound},
		{"demote another agent's record", CommandDemote, map[string]any{"recordId": spyFact.Record.ID, "reason": "r"}, notFound},
		{"invalidate another agent's record", CommandInvalidate, map[string]any{"recordId": spyFact.Record.ID, "reason": "r"}, notFound},
		{"supersede another agent's record", CommandSupersede, map[string]any{"keepId": fact.Record.ID, "dropId": spyFact.Record.ID}, notFound},
		{"adopt another agent's record", CommandAdopt, map[string]any{"recordId": spyFact.Record.ID}, refused},
		{"adopt own auto fact", CommandAdopt, map[string]any{"recordId": fact.Record.ID}, refused},
		{"retarget guarded to another guarded slot", CommandRetarget, map[string]any{"recordId": guard.Record.ID, "target": "judgment.incident.escalationTriggers"}, retargetGuarded},
		{"retarget another agent's record", CommandRetarget, map[string]any{"recordId": spyFact.Record.ID, "target": "background.projectContext.other"}, notFound},
		{"delete", "agent-ls.delete", map[string]any{"recordId": fact.Record.ID}, "no such command"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := stateOf(t, env, agents...)
			edits := len(callsOf(c, methodApplyEdit))
			out, err := exec(tt.command, tt.args)
			after := stateOf(t, env, agents...)
			for _, a := range agents {
				if fmt.Sprint(before.promoted[a]) != fmt.Sprint(after.promoted[a]) {
					t.Errorf("%s's promoted records changed: %v -> %v", a, before.promoted[a], after.promoted[a])
				}
			}
			added := after.ops[len(before.ops):]
			switch tt.want {
			case refused:
				if codeOf(err) != codeRefused {
					t.Errorf("answer %+v, %v; want refused (%d)", out, err, codeRefused)
				}
			case refusedOrProposal:
				// Blocked (a gate not passed) is a refusal that is not an error.
				if err == nil && out.Status != string(engine.StatusPending) && out.Status != string(engine.StatusBlocked) {
					t.Errorf("answer %+v; want refused, blocked or pending", out)
				}
				if err != nil && codeOf(err) != codeRefused {
					t.Errorf("error %v; want refused (%d)", err, codeRefused)
				}
				// Pending: a proposal is open (a new one, or the one already
				// waiting for the same change).
				if err == nil && out.Status == string(engine.StatusPending) && (after.pending < before.pending || after.pending == 0 || !strings.Contains(out.Message, "proposal")) {
					t.Errorf("answered pending but no proposal is open: %+v", out)
				}
			case notFound:
				if codeOf(err) != jsonrpc2.InvalidParams || !strings.Contains(err.Error(), "not found") && !strings.Contains(err.Error(), "no record") {
					t.Errorf("answer %+v, %v; want InvalidParams not found", out, err)
				}
			case retargetGuarded:
				// The agent's invalidate of the same record (an earlier row)
				// is pending: the retarget's supersede waits for that
				// decision (issue 19 item 8) instead of reusing it.
				if (err != nil || out.Status != string(engine.StatePending)) && (codeOf(err) != codeRefused || !strings.Contains(err.Error(), "already pending")) {
					t.Errorf("answer %+v, %v; want the new record pending, or refused while a demotion is pending", out, err)
				}
				for _, op := range added {
					if op != store.OpWrite && op != store.OpPropose {
						t.Errorf("the ledger gained %v; want only write and propose", added)
						break
					}
				}
				added = nil
			default:
				if codeOf(err) != jsonrpc2.InvalidParams || !strings.Contains(err.Error(), "unknown command") {
					t.Errorf("answer %+v, %v; want InvalidParams unknown command", out, err)
				}
			}
			for _, op := range added {
				if err != nil || op != store.OpPropose {
					t.Errorf("the ledger gained %v (answer %+v, %v)", added, out, err)
					break
				}
			}
			for _, call := range callsOf(c, methodApplyEdit)[edits:] {
				if strings.Contains(string(call), secret) {
					t.Errorf("adopt sent another agent's content to the editor: %s", call)
				}
			}
		})
	}

	// Nothing of spy-ops's shows in deploy-ops's file.
	leaks := func(what string, v any) {
		t.Helper()
		b, _ := json.Marshal(v)
		if strings.Contains(string(b), secret) {
			t.Errorf("%s shows another agent's records: %s", what, b)
		}
	}
	c.change(uri, text, 2)
	c.awaitDiagnostics(uri, 2)
	hs := c.hints(uri)
	if hintWith(hs, "Tuesdays") == nil || hintWith(hs, trigger) == nil {
		t.Errorf("own records missing from the hints: %+v", hs)
	}
	leaks("inlay hints", hs)
	for i := range hs {
		leaks("resolved hint", c.resolve(&hs[i]))
	}
	for line := range strings.Count(text, "\n") {
		var hover *protocol.Hover
		c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": uri},
			"position": map[string]any{"line": line, "character": 6}}, &hover)
		leaks(fmt.Sprintf("hover on line %d", line), hover)
	}
	whole := map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 9999, "character": 0}}
	var actions []protocol.CodeAction
	c.call(protocol.MethodTextDocumentCodeAction, map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": whole, "context": map[string]any{"diagnostics": []any{}}}, &actions)
	leaks("code actions", actions)
	var lenses []protocol.CodeLens
	c.call(protocol.MethodTextDocumentCodeLens, map[string]any{"textDocument": map[string]any{"uri": uri}}, &lenses)
	leaks("code lenses", lenses)
	var prompt ComposedPrompt
	c.call(methodComposedPrompt, map[string]any{"uri": uri}, &prompt)
	if !strings.Contains(prompt.Text, "Tuesdays") {
		t.Errorf("composed prompt lacks the agent's own fact:\n%s", prompt.Text)
	}
	leaks("composed prompt", prompt)
	c.call(methodComposedPrompt, map[string]any{"uri": uri, "scope": map[string]string{store.AgentKey: "spy-ops"}}, &prompt)
	leaks("composed prompt with the other agent's name as scope", prompt)
	// Another project's scope is not the agent's to compose.
	var other json.RawMessage
	if err := c.callErr(methodComposedPrompt, map[string]any{"uri": uri, "scope": map[string]string{"project": "elsewhere"}}, &other); codeOf(err) != codeRefused {
		t.Errorf("composed prompt with another project's scope: %s, %v; want refused", other, err)
	}
	var props json.RawMessage
	c.call(methodProposals, map[string]any{"uri": uri}, &props)
	leaks("proposals", props)
	var learned json.RawMessage
	c.call(methodLearnings, map[string]any{"uri": uri, "since": "30d"}, &learned)
	leaks("learnings", learned)
	leaks("notifications", c.notesOf(protocol.MethodTextDocumentPublishDiagnostics))

	// spy-ops's own file, opened as agent:deploy-ops: no memory of it shows,
	// and its memory requests are refused.
	spyURI := c.open(spyPath, spyText, 1)
	c.awaitDiagnostics(spyURI, 1)
	leaks("hints of the other agent's file", c.hints(spyURI))
	c.call(protocol.MethodTextDocumentCodeLens, map[string]any{"textDocument": map[string]any{"uri": spyURI}}, &lenses)
	leaks("code lenses of the other agent's file", lenses)
	c.call(protocol.MethodTextDocumentCodeAction, map[string]any{"textDocument": map[string]any{"uri": spyURI},
		"range": whole, "context": map[string]any{"diagnostics": []any{}}}, &actions)
	leaks("code actions of the other agent's file", actions)
	for line := range strings.Count(spyText, "\n") {
		var hover *protocol.Hover
		c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": spyURI},
			"position": map[string]any{"line": line, "character": 6}}, &hover)
		leaks(fmt.Sprintf("hover on line %d of the other agent's file", line), hover)
	}
	for _, req := range []struct {
		method string
		params map[string]any
	}{
		{methodComposedPrompt, map[string]any{"uri": spyURI}},
		{methodProposals, map[string]any{"uri": spyURI}},
		{methodLearnings, map[string]any{"uri": spyURI, "since": "30d"}},
	} {
		var out json.RawMessage
		err := c.callErr(req.method, req.params, &out)
		if codeOf(err) != codeRefused {
			t.Errorf("%s of the other agent's file: %s, %v; want refused", req.method, out, err)
		}
		leaks(req.method+" of the other agent's file", out)
	}
	before := stateOf(t, env, agents...)
	var out CommandResult
	err = c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": CommandDemote,
		"arguments": []any{map[string]any{"uri": spyURI, "recordId": spyFact.Record.ID, "reason": "r"}}}, &out)
	if codeOf(err) != codeRefused {
		t.Errorf("demote through the other agent's file: %+v, %v; want refused", out, err)
	}
	if after := stateOf(t, env, agents...); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("demote through the other agent's file changed the store: %v -> %v", before, after)
	}
	leaks("notifications", c.notesOf(protocol.MethodTextDocumentPublishDiagnostics))
}

// callsOf returns the params of every server->client request of method.
func callsOf(c *testClient, method string) []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []json.RawMessage
	for _, n := range c.calls {
		if n.method == method {
			out = append(out, n.params)
		}
	}
	return out
}

// TestAdoptAnotherAgentsRecord: a human adopting, into one agent's file, a
// record of another agent (by its id) gets "not found", the editor is
// asked for no edit, and the record stays valid.
func TestAdoptAnotherAgentsRecord(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	text := deployText(t)
	path := env.write(t, "deploy.agent.yaml", text)
	spy := agentSave(t, env, strings.Replace(text, "name: deploy-ops", "name: spy-ops", 1), "SPYSECRET fact", "background.projectContext.spy_window", "conv-1")
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
	c.initialize(env.root, map[string]any{"actor": "human:ana"}, false)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	var out CommandResult
	err := c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": CommandAdopt,
		"arguments": []any{map[string]any{"recordId": spy.Record.ID, "uri": uri}}}, &out)
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != jsonrpc2.InvalidParams || !strings.Contains(je.Message, "not found") {
		t.Errorf("adopt of another agent's record: %+v, %v; want InvalidParams not found", out, err)
	}
	if calls := callsOf(c, methodApplyEdit); len(calls) != 0 {
		t.Errorf("the editor was asked to apply %s", calls)
	}
	withBolt(t, env, func(st store.Store) {
		if rec, err := st.Get(context.Background(), spy.Record.ID); err != nil || rec.InvalidAt != "" {
			t.Errorf("record after the refused adopt: %+v, %v", rec, err)
		}
	})
}

// TestWorkspaceConfinement: the server serves only files inside its
// workspace folders and opens only the workspace's store. Next to the
// workspace lies another directory with its own agent file, config and
// store (holding a record), and above it a .agent-ls.yaml pointing the
// store elsewhere. Opening the outside file is ignored (not tracked, no
// diagnostics, no store opened, one log message); every request and
// command naming it, a symlink inside the workspace leading to it, or a URI
// that escapes the root with "..", is not file://, is relative, names a
// host or holds a NUL byte, answers InvalidParams; ids with NUL bytes,
// spaces or 300 bytes answer InvalidParams. The config above the workspace
// is never read, nor the outside one on a watched-file change of it (its
// unknown key would warn): the only store ever opened is the workspace's.
func TestWorkspaceConfinement(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	env := &testEnv{root: filepath.Join(parent, "ws")}
	env.storePath = filepath.Join(env.root, ".agent-memory", "memory.db")
	outside := &testEnv{root: filepath.Join(parent, "outside")}
	outside.storePath = filepath.Join(outside.root, ".agent-memory", "memory.db")
	text := deployText(t)
	if err := os.WriteFile(filepath.Join(parent, ".agent-ls.yaml"), []byte("store: "+filepath.Join(parent, "above.db")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := env.write(t, "deploy.agent.yaml", text)
	agentSave(t, env, text, "Deploys go out Tuesdays", "background.projectContext.deploy_window", "conv-1")
	outPath := outside.write(t, "deploy.agent.yaml", text)
	// Its unknown key would make a warning if the server ever read it.
	outside.write(t, ".agent-ls.yaml", "actor: human:mallory\nbogusKey: 1\n")
	secret := agentSave(t, outside, text, "OUTSIDESECRET fact", "background.projectContext.secret", "conv-2")
	link := filepath.Join(env.root, "link.agent.yaml")
	if err := os.Symlink(outPath, link); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var opened []string
	open := boltOpener(time.Now)
	var srv *server
	c := startServer(t, Options{OpenStore: func(ctx context.Context, p string) (store.Store, error) {
		mu.Lock()
		opened = append(opened, p)
		mu.Unlock()
		return open(ctx, p)
	}, testHook: func(s *server) { srv = s }})
	c.initialize(env.root, nil, false)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	outURI := c.open(outPath, text, 1)
	linkURI := c.open(link, text, 1)
	if hs := c.hints(uri); hintWith(hs, "Tuesdays") == nil {
		t.Errorf("the workspace's own store is not served: %+v", hs)
	}
	// The hints request was handled after both didOpens: neither is served
	// (their text is followed, for a folder added later: not served does
	// not mean not tracked).
	if got := srv.openAgentURIs(); len(got) != 1 || got[0] != uri {
		t.Errorf("served agent files %v, want only %s", got, uri)
	}

	escape := protocol.DocumentURI(string(pathToURI(env.root)) + "/../outside/deploy.agent.yaml")
	badURIs := []struct {
		name string
		uri  protocol.DocumentURI
		msg  string
	}{
		{"outside the folders", outURI, "outside the workspace folders"},
		{"symlink leading outside", linkURI, "outside the workspace folders"},
		{"dot-dot escaping the root", escape, "outside the workspace folders"},
		{"not file://", "untitled:Untitled-1", "want a file:// URI"},
		{"https", "https://example.com/deploy.agent.yaml", "want a file:// URI"},
		{"relative (opaque)", "file:deploy.agent.yaml", "not an absolute file path"},
		{"relative (no scheme)", "deploy.agent.yaml", "want a file:// URI"},
		{"a host", protocol.DocumentURI("file://elsewhere" + filepath.ToSlash(path)), "names the host"},
		{"percent-encoded NUL", protocol.DocumentURI(string(uri) + "%00.yaml"), "NUL byte"},
		{"raw NUL", protocol.DocumentURI(string(uri) + "\x00.yaml"), "NUL byte"},
	}
	invalid := func(what string, err error, msg string) {
		t.Helper()
		var je *jsonrpc2.Error
		if !errors.As(err, &je) || je.Code != jsonrpc2.InvalidParams || !strings.Contains(je.Message, msg) {
			t.Errorf("%s: %v; want InvalidParams with %q", what, err, msg)
		}
	}
	commands := []struct {
		command string
		args    map[string]any
	}{
		{CommandPromote, map[string]any{"recordId": secret.Record.ID}},
		{CommandDemote, map[string]any{"recordId": secret.Record.ID, "reason": "r"}},
		{CommandInvalidate, map[string]any{"recordId": secret.Record.ID, "reason": "r"}},
		{CommandSupersede, map[string]any{"keepId": secret.Record.ID, "dropId": secret.Record.ID}},
		{CommandApprove, map[string]any{"proposalId": secret.Record.ID}},
		{CommandReject, map[string]any{"proposalId": secret.Record.ID, "reason": "r"}},
		{CommandAdopt, map[string]any{"recordId": secret.Record.ID}},
		{CommandRetarget, map[string]any{"recordId": secret.Record.ID, "target": "background.projectContext.x"}},
		{CommandShowComposedPrompt, map[string]any{}},
	}
	pos := map[string]any{"line": 4, "character": 4}
	whole := map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 999, "character": 0}}
	for _, b := range badURIs {
		t.Run(b.name, func(t *testing.T) {
			doc := map[string]any{"uri": b.uri}
			var out json.RawMessage
			for _, req := range []struct {
				method string
				params map[string]any
			}{
				{methodComposedPrompt, map[string]any{"uri": b.uri}},
				{methodProposals, map[string]any{"uri": b.uri}},
				{methodLearnings, map[string]any{"uri": b.uri, "since": "7d"}},
				{protocol.MethodTextDocumentHover, map[string]any{"textDocument": doc, "position": pos}},
				{methodInlayHint, map[string]any{"textDocument": doc, "range": whole}},
				{protocol.MethodTextDocumentCodeAction, map[string]any{"textDocument": doc, "range": whole, "context": map[string]any{"diagnostics": []any{}}}},
				{protocol.MethodTextDocumentCompletion, map[string]any{"textDocument": doc, "position": pos}},
				{protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": doc}},
			} {
				invalid(req.method, c.callErr(req.method, req.params, &out), b.msg)
				if strings.Contains(string(out), "OUTSIDESECRET") {
					t.Errorf("%s answered the outside store's record: %s", req.method, out)
				}
			}
			for _, cmd := range commands {
				args := map[string]any{"uri": b.uri}
				for k, v := range cmd.args {
					args[k] = v
				}
				invalid(cmd.command, c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": cmd.command, "arguments": []any{args}}, &out), b.msg)
			}
		})
	}
	for _, id := range []string{"01ABC\x00DEF", "01ABC DEF", "01ABC\nDEF", strings.Repeat("0", 300)} {
		for _, arg := range []struct{ command, name string }{
			{CommandPromote, "recordId"}, {CommandApprove, "proposalId"}, {CommandSupersede, "keepId"}, {CommandSupersede, "dropId"},
		} {
			args := map[string]any{"uri": uri, "recordId": "01M8X9RPMQX06KX1GRV8247EY2", "proposalId": "01M8X9RPMQX06KX1GRV8247EY2",
				"keepId": "01M8X9RPMQX06KX1GRV8247EY2", "dropId": "01M8X9RPMQX06KX1GRV8247EY3", "reason": "r"}
			args[arg.name] = id
			var out CommandResult
			invalid(fmt.Sprintf("%s with %s %q", arg.command, arg.name, id),
				c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": arg.command, "arguments": []any{args}}, &out), arg.name)
		}
	}
	var lenses []protocol.CodeLens
	c.call(protocol.MethodTextDocumentCodeLens, map[string]any{"textDocument": map[string]any{"uri": outURI}}, &lenses)
	if len(lenses) != 0 {
		t.Errorf("code lenses of a file outside the workspace: %+v", lenses)
	}

	// A watched-file change of the outside config is not read.
	c.notify(protocol.MethodWorkspaceDidChangeWatchedFiles, map[string]any{"changes": []any{
		map[string]any{"uri": pathToURI(filepath.Join(outside.root, ".agent-ls.yaml")), "type": 2}}})
	c.hints(uri) // handled after the notification
	for _, m := range c.notesOf(protocol.MethodWindowShowMessage) {
		if strings.Contains(string(m), outside.root) {
			t.Errorf("the server read the config outside the workspace: %s", m)
		}
	}

	// Served files still work, and only the workspace's store was opened.
	c.change(uri, text, 2)
	c.awaitDiagnostics(uri, 2)
	for _, u := range []protocol.DocumentURI{outURI, linkURI, escape} {
		if ds := c.diagnostics(u); len(ds) != 0 {
			t.Errorf("diagnostics published for %s: %+v", u, ds)
		}
	}
	mu.Lock()
	for _, p := range opened {
		if p != env.storePath {
			t.Errorf("opened the store %s; only %s may be opened", p, env.storePath)
		}
	}
	mu.Unlock()
	logs := ""
	for _, m := range c.notesOf(protocol.MethodWindowLogMessage) {
		logs += string(m)
	}
	if !strings.Contains(logs, "not serving a file outside the workspace") {
		t.Errorf("no log message for the ignored didOpen: %s", logs)
	}
	for _, p := range []string{filepath.Join(parent, "above.db")} {
		if fileExists(p) {
			t.Errorf("%s was created", p)
		}
	}
}

// TestMissingStoreCommandsCreateNothing: with no store file, every command
// answers a store-unavailable error naming the missing file, and neither the
// file nor its directory is created (a failed command leaves no empty store
// behind for later commands to find).
func TestMissingStoreCommandsCreateNothing(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	env := newTestEnv(t)
	path := env.write(t, "deploy.agent.yaml", string(src))
	c := startServer(t, Options{OpenStore: boltOpener(time.Now), OpenStoreReadOnly: boltReadOnlyOpener(time.Now)})
	c.initialize(env.root, map[string]any{"actor": "human:ana"}, true)
	uri := c.open(path, string(src), 1)
	c.awaitDiagnostics(uri, 1)
	for _, cmd := range []struct {
		command string
		args    map[string]any
	}{
		{CommandPromote, map[string]any{"recordId": "mem_1"}},
		{CommandDemote, map[string]any{"recordId": "mem_1", "reason": "wrong"}},
		{CommandInvalidate, map[string]any{"recordId": "mem_1", "reason": "wrong"}},
		{CommandSupersede, map[string]any{"keepId": "mem_1", "dropId": "mem_2"}},
		{CommandApprove, map[string]any{"proposalId": "prop_1"}},
		{CommandReject, map[string]any{"proposalId": "prop_1", "reason": "no"}},
		{CommandAdopt, map[string]any{"recordId": "mem_1"}},
		{CommandRetarget, map[string]any{"recordId": "mem_1", "target": "judgment.incident.heuristics"}},
	} {
		cmd.args["uri"] = uri
		var out CommandResult
		err := c.callErr(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": cmd.command, "arguments": []any{cmd.args}}, &out)
		var je *jsonrpc2.Error
		if !errors.As(err, &je) || je.Code != codeStoreUnavailable || !strings.Contains(je.Message, "no memory store") || !strings.Contains(je.Message, env.storePath) {
			t.Errorf("%s: %v; want code %d saying there is no memory store at %s", cmd.command, err, codeStoreUnavailable, env.storePath)
		}
		if _, err := os.Stat(filepath.Dir(env.storePath)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s created %s (stat: %v)", cmd.command, filepath.Dir(env.storePath), err)
		}
	}
}
