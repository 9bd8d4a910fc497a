package bolt

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// reliabilityEnv switches the test binary into a child role of the SIGKILL
// and soak tests; see TestReliabilityHelper.
const reliabilityEnv = "AGENT_LS_RELIABILITY_HELPER"

// killsEnv overrides how many times TestSIGKILLWriter kills its writer.
const killsEnv = "AGENT_LS_KILLS"

// defaultKills is the number of kills in a normal `go test`.
const defaultKills = 50

// killsPerFile is how many kills TestSIGKILLWriter runs on one file.
const killsPerFile = 100

// maxBatch is the largest batch the killed writer writes.
const maxBatch = 12

var killer = store.Actor{Kind: store.ActorSystem, Name: "kill-test"}

// TestReliabilityHelper is not a test: TestSIGKILLWriter,
// TestSIGKILLDuringMigration and TestSoakConcurrentProcesses run the test binary again with reliabilityEnv
// set, and this function is the child.
//
//	killwriter PATH ITER SEED   loop until killed over batches K: write a batch
//	                            tagged batch:ITER-K and size:N, promote record
//	                            0, corroborate it, propose and approve record 1
//	                            (guarded), invalidate record 2, demote record 0
//	                            when K is odd, delete record 3; record 0 of the
//	                            next batch supersedes record 4; print
//	                            "STEP TAG" after each step, "done TAG" last
//	killwriter PATH ITER SEED batch
//	                            the same steps, each batch K's in one
//	                            Store.Batch: print "begin TAG" before it and
//	                            every "STEP TAG" after it committed
//	migrate PATH                print "ready", open PATH (migrating a version-0
//	                            file), print "migrated"
//	soaker PATH N SHARED DUR    see soakChild
func TestReliabilityHelper(t *testing.T) {
	args := strings.Fields(os.Getenv(reliabilityEnv))
	if len(args) == 0 {
		t.Skip("child-process helper")
	}
	var err error
	switch args[0] {
	case "killwriter":
		err = killWriter(args[1:])
	case "migrate":
		fmt.Println("ready")
		var st *Store
		if st, err = Open(args[1], store.Options{LockTimeout: 5 * time.Second}); err == nil {
			fmt.Println("migrated")
			err = st.Close()
		}
	case "soaker":
		err = soakChild(args[1:])
	case "creator":
		err = creator(args[1])
	default:
		err = fmt.Errorf("unknown helper role %q", args[0])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(3)
	}
	os.Exit(0)
}

func killWriter(args []string) error {
	path, iter := args[0], args[1]
	seed, _ := strconv.ParseInt(args[2], 10, 64)
	inBatch := len(args) > 3 && args[3] == "batch"
	rng := rand.New(rand.NewSource(seed))
	st, err := Open(path, store.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := context.Background()
	out := bufio.NewWriter(os.Stdout)
	emit := func(format string, a ...any) {
		fmt.Fprintf(out, format+"\n", a...)
		_ = out.Flush()
	}
	emit("ready")
	prev := "" // the previous batch's record 4, which the next batch's record 0 supersedes
	for k := 0; ; k++ {
		if !inBatch {
			if err := killSteps(ctx, st, iter, k, rng, &prev, emit); err != nil {
				return err
			}
			continue
		}
		var acks []string
		tag := fmt.Sprintf("batch:%s-%d", iter, k)
		emit("begin %s", tag)
		next := prev
		err := st.Update(ctx, func(tx store.Tx) error {
			acks = acks[:0]
			return killSteps(ctx, tx, iter, k, rng, &next, func(format string, a ...any) { acks = append(acks, fmt.Sprintf(format, a...)) })
		})
		if err != nil {
			return err
		}
		prev = next
		for _, a := range acks {
			emit("%s", a)
		}
	}
}

// killSteps is batch k of the killwriter role on s; say acknowledges each
// step, prev carries the record the next batch supersedes.
func killSteps(ctx context.Context, s store.Tx, iter string, k int, rng *rand.Rand, prev *string, say func(string, ...any)) error {
	{
		tag := fmt.Sprintf("batch:%s-%d", iter, k)
		n := 1 + rng.Intn(maxBatch)
		batch := make([]store.WriteRequest, n)
		for i := range batch {
			// Contents of up to ~3 KB so a batch spans several pages.
			pad := strings.Repeat(fmt.Sprintf("%s/%d ", tag, i), rng.Intn(200))
			batch[i] = store.WriteRequest{Kind: schema.KindFact, Content: fmt.Sprintf("%s record %d %s", tag, i, pad),
				Tags: []string{tag, "size:" + strconv.Itoa(n)}, Scope: map[string]string{"iter": iter}}
		}
		batch[0].Supersedes = *prev
		recs, err := s.Write(ctx, batch, killer)
		if err != nil {
			return err
		}
		say("wrote %s", tag)
		*prev = ""
		if n >= 5 {
			*prev = recs[4].ID
		}
		if _, err := s.Promote(ctx, recs[0].ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: killer,
			Evidence: store.Evidence{Note: tag}}); err != nil {
			return err
		}
		say("promoted %s", tag)
		if _, err := s.Corroborate(ctx, recs[0].ID, schema.Support{ConversationID: "conv-" + tag}, killer); err != nil {
			return err
		}
		say("corroborated %s", tag)
		if n >= 2 {
			p, err := s.Propose(ctx, store.ProposalRequest{Kind: store.ProposePromote, RecordID: recs[1].ID, Tier: schema.TierGuarded,
				RequestedBy: store.Actor{Kind: store.ActorAgent, Name: "kill-test"}, Reason: tag})
			if err != nil {
				return err
			}
			say("proposed %s", tag)
			if _, err := s.Approve(ctx, p.ID, human, tag); err != nil {
				return err
			}
			say("approved %s", tag)
		}
		if n >= 3 {
			if err := s.Invalidate(ctx, recs[2].ID, "retired by "+tag, killer); err != nil {
				return err
			}
			say("invalidated %s", tag)
		}
		if k%2 == 1 {
			if err := s.Demote(ctx, recs[0].ID, "demoted by "+tag, killer); err != nil {
				return err
			}
			say("demoted %s", tag)
		}
		if n >= 4 {
			if err := s.Delete(ctx, recs[3].ID, human); err != nil {
				return err
			}
			say("deleted %s", tag)
		}
		say("done %s", tag)
	}
	return nil
}

// lockedBuffer collects a child's output; ready is closed at the first
// "ready" line.
type lockedBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan struct{}
	once  sync.Once
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if bytes.Contains(b.buf.Bytes(), []byte("ready\n")) {
		b.once.Do(func() { close(b.ready) })
	}
	return n, err
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func reliabilityCmd(role string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestReliabilityHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), reliabilityEnv+"="+role)
	return cmd
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// TestSIGKILLWriter kills a child process running the killwriter role (every
// kind of mutation, batch after batch) with SIGKILL at a random moment,
// AGENT_LS_KILLS times (default 50), on a fresh file every killsPerFile
// kills. After every kill the database opens read-write, the ledger
// verifies, every batch is entirely present or entirely absent, the records,
// promotion rows and proposals are exactly what the ledger says, and every
// step the child saw succeed is there (checkAfterKill).
func TestSIGKILLWriter(t *testing.T) {
	t.Parallel()
	sigkillWriter(t, false)
}

// TestSIGKILLBatchWriter is TestSIGKILLWriter with each batch's steps in one
// Store.Batch: besides every check of TestSIGKILLWriter, a batch in the
// file has all its steps (checkBatchSteps), and some kills land inside a
// batch (after its "begin" line).
func TestSIGKILLBatchWriter(t *testing.T) {
	t.Parallel()
	sigkillWriter(t, true)
}

func sigkillWriter(t *testing.T, inBatch bool) {
	kills := envInt(t, killsEnv, defaultKills)
	seed := time.Now().UnixNano()
	t.Logf("seed %d, %d kills", seed, kills)
	rng := rand.New(rand.NewSource(seed))
	dir := t.TempDir()
	var path string
	var acked map[string]bool // "STEP TAG" lines the child printed
	after := map[string]int{} // kills by the last step reported before them
	var ops map[store.Op]int  // ledger entries by op after the last kill
	for iter := range kills {
		// A fresh file every killsPerFile kills keeps the checks, which
		// read the whole file, from growing without bound in long runs.
		if iter%killsPerFile == 0 {
			path = filepath.Join(dir, fmt.Sprintf("killed-%d.db", iter/killsPerFile))
			acked = map[string]bool{}
		}
		out := &lockedBuffer{ready: make(chan struct{})}
		role := fmt.Sprintf("killwriter %s %d %d", path, iter, rng.Int63())
		if inBatch {
			role += " batch"
		}
		cmd := reliabilityCmd(role)
		cmd.Stdout = out
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.WaitDelay = 10 * time.Second // a pipe held open elsewhere must not hang Wait
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waited := make(chan error, 1)
		go func() { waited <- cmd.Wait() }()
		select {
		case <-out.ready:
		case err := <-waited:
			t.Fatalf("kill %d: writer exited before it was ready: %v\n%s", iter, err, stderr.String())
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			t.Fatalf("kill %d: writer never became ready", iter)
		}
		time.Sleep(time.Duration(rng.Intn(40_000)) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatalf("kill %d: %v (writer: %v)\n%s", iter, err, <-waited, stderr.String())
		}
		err := <-waited
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("kill %d: writer ended with %v before the kill, not by SIGKILL\n%s", iter, err, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		for _, l := range lines[1:] {
			if !strings.HasPrefix(l, "begin ") {
				acked[l] = true
			}
		}
		// The step after the last one reported is where the kill landed.
		last, _, _ := strings.Cut(lines[len(lines)-1], " ")
		after[last]++
		ops = checkAfterKill(t, iter, path, acked, inBatch)
		if t.Failed() {
			t.Fatalf("after kill %d (seed %d)", iter, seed)
		}
	}
	t.Logf("kills by the last step done before them: %v", after)
	t.Logf("ledger entries by op: %v", ops)
	if after["done"] == kills || (inBatch && after["begin"] == 0) {
		t.Errorf("all %d kills landed between batches, none inside one", kills)
	}
}

// checkAfterKill asserts, on the file a writer was killed over, that:
//   - it opens read-write and its ledger verifies;
//   - every batch the ledger created has all its records (none partial);
//   - each record has one creating entry and is stored unless deleted, has
//     one support per corroborate entry, is invalid exactly when invalidated
//     or superseded, and names the record that superseded it;
//   - the promotion rows are the set the ledger replays to, and each
//     proposal is approved exactly when an approve entry exists;
//   - every step the child acknowledged (acked) is in the file.
//
// It returns the ledger's entry count per op.
func checkAfterKill(t *testing.T, iter int, path string, acked map[string]bool, inBatch bool) (ops map[store.Op]int) {
	t.Helper()
	ctx := context.Background()
	s, err := Open(path, store.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		t.Errorf("kill %d: Open after SIGKILL: %v", iter, err)
		return
	}
	defer s.Close()
	if err := s.Verify(ctx); err != nil {
		t.Errorf("kill %d: Verify after SIGKILL: %v", iter, err)
	}

	res, err := s.Search(ctx, store.Query{Limit: store.Limit(store.Unlimited), IncludeInvalidated: true})
	if err != nil {
		t.Fatalf("kill %d: Search: %v", iter, err)
	}
	if res.Skipped != 0 {
		t.Errorf("kill %d: %d records do not decode", iter, res.Skipped)
	}
	byID := map[string]schema.MemoryRecord{}
	for _, r := range res.Records {
		byID[r.ID] = r
	}

	entries, err := s.Ledger(ctx, store.LedgerFilter{})
	if err != nil {
		t.Fatalf("kill %d: Ledger: %v", iter, err)
	}
	// Batches as the ledger wrote them: write and supersede entries carry
	// the record they created.
	type batch struct {
		want int
		ids  map[int]string // record index in the batch -> id
	}
	batches := map[string]*batch{}
	created := map[string]int{}            // record id -> write or supersede entries creating it
	count := map[store.Op]map[string]int{} // op -> record id -> entries
	promoted := map[string]bool{}          // replayed from the ledger
	approved := map[string]bool{}          // proposal ids
	supersededBy := map[string]string{}    // old id -> new id
	for _, e := range entries {
		if count[e.Op] == nil {
			count[e.Op] = map[string]int{}
		}
		count[e.Op][e.RecordID]++
		switch e.Op {
		case store.OpWrite, store.OpSupersede:
			r := e.Record
			if r == nil || len(r.Tags) != 2 || !strings.HasPrefix(r.Tags[0], "batch:") || !strings.HasPrefix(r.Tags[1], "size:") {
				t.Errorf("kill %d: %s entry %d does not carry a tagged record", iter, e.Op, e.Seq)
				continue
			}
			created[r.ID]++
			if e.Op == store.OpSupersede {
				supersededBy[e.RecordID] = r.ID
			}
			tag := r.Tags[0]
			n, _ := strconv.Atoi(strings.TrimPrefix(r.Tags[1], "size:"))
			b := batches[tag]
			if b == nil {
				b = &batch{want: n, ids: map[int]string{}}
				batches[tag] = b
			}
			var i int
			if _, err := fmt.Sscanf(strings.TrimPrefix(r.Content, tag), " record %d ", &i); err != nil {
				t.Errorf("kill %d: record %s content %.40q", iter, r.ID, r.Content)
			}
			b.ids[i] = r.ID
		case store.OpCorroborate, store.OpInvalidate, store.OpPropose:
		case store.OpPromote:
			promoted[e.RecordID] = true
		case store.OpDemote, store.OpDelete:
			delete(promoted, e.RecordID)
		case store.OpApprove:
			approved[e.ProposalID] = true
			if e.Proposal == nil || e.Proposal.Kind != store.ProposePromote {
				t.Errorf("kill %d: approve entry %d without its promote proposal", iter, e.Seq)
				continue
			}
			promoted[e.RecordID] = true
		default:
			t.Errorf("kill %d: unexpected ledger op %s", iter, e.Op)
		}
	}
	ops = map[store.Op]int{}
	for op, m := range count {
		for _, n := range m {
			ops[op] += n
		}
	}
	for tag, b := range batches {
		if len(b.ids) != b.want {
			t.Errorf("kill %d: batch %s has %d of its %d records", iter, tag, len(b.ids), b.want)
		}
	}
	for id, n := range created {
		_, present := byID[id]
		deleted := count[store.OpDelete][id]
		if n != 1 || present == (deleted == 1) {
			t.Errorf("kill %d: record %s: %d creating entries, %d delete entries, stored: %v", iter, id, n, deleted, present)
		}
	}
	for id, r := range byID {
		if created[id] != 1 {
			t.Errorf("kill %d: record %s is stored with %d creating entries, want 1", iter, id, created[id])
		}
		if len(r.Supports) != count[store.OpCorroborate][id] {
			t.Errorf("kill %d: record %s has %d supports and %d corroborate entries", iter, id, len(r.Supports), count[store.OpCorroborate][id])
		}
		retired := count[store.OpInvalidate][id] + count[store.OpSupersede][id]
		if inv := r.InvalidAt != ""; inv != (retired == 1) {
			t.Errorf("kill %d: record %s invalid=%v with %d invalidate or supersede entries", iter, id, inv, retired)
		}
		if r.SupersededBy != supersededBy[id] {
			t.Errorf("kill %d: record %s supersededBy %q, the ledger says %q", iter, id, r.SupersededBy, supersededBy[id])
		}
	}

	// Promotion rows and proposals, read straight from their buckets, are
	// exactly what the ledger says.
	rows := map[string]bool{}
	proposals := map[string]store.ProposalState{}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("kill %d: raw open: %v", iter, err)
	}
	verr := db.View(func(tx *bbolt.Tx) error {
		if err := tx.Bucket(bucketPromotions).ForEach(func(k, _ []byte) error {
			rows[string(k)] = true
			return nil
		}); err != nil {
			return err
		}
		return tx.Bucket(bucketProposals).ForEach(func(k, v []byte) error {
			var p store.Proposal
			if err := json.Unmarshal(v, &p); err != nil {
				return fmt.Errorf("proposal %s: %w", k, err)
			}
			proposals[p.ID] = p.State
			return nil
		})
	})
	db.Close()
	if verr != nil {
		t.Fatalf("kill %d: raw read: %v", iter, verr)
	}
	for id := range rows {
		if !promoted[id] {
			t.Errorf("kill %d: promotion row for %s, which the ledger does not promote", iter, id)
		}
		if _, ok := byID[id]; !ok {
			t.Errorf("kill %d: promotion row for %s, which is not stored", iter, id)
		}
	}
	for id := range promoted {
		if !rows[id] {
			t.Errorf("kill %d: the ledger promotes %s, which has no promotion row", iter, id)
		}
	}
	if len(proposals) != len(count[store.OpPropose]) {
		t.Errorf("kill %d: %d proposals, %d propose entries", iter, len(proposals), len(count[store.OpPropose]))
	}
	for id, st := range proposals {
		if (st == store.ProposalApproved) != approved[id] {
			t.Errorf("kill %d: proposal %s is %s; approve entry: %v", iter, id, st, approved[id])
		}
	}

	if inBatch {
		// Each batch in the file has every step the killwriter takes.
		for tag, b := range batches {
			var k int
			if _, err := fmt.Sscanf(tag[strings.LastIndex(tag, "-")+1:], "%d", &k); err != nil {
				t.Errorf("kill %d: batch tag %q", iter, tag)
				continue
			}
			steps := []struct {
				want bool
				ok   bool
				what string
			}{
				{true, count[store.OpPromote][b.ids[0]] == 1 && count[store.OpCorroborate][b.ids[0]] == 1, "promote and corroborate record 0"},
				{b.want >= 2, count[store.OpApprove][b.ids[1]] == 1, "approve record 1"},
				{b.want >= 3, count[store.OpInvalidate][b.ids[2]] == 1, "invalidate record 2"},
				{k%2 == 1, count[store.OpDemote][b.ids[0]] == 1, "demote record 0"},
				{b.want >= 4, count[store.OpDelete][b.ids[3]] == 1, "delete record 3"},
			}
			for _, st := range steps {
				if st.want && !st.ok {
					t.Errorf("kill %d: batch %s is in the file without its step %q: a batch is not all-or-nothing", iter, tag, st.what)
				}
			}
		}
	}

	// What the child saw succeed survived the kill.
	for line := range acked {
		step, tag, _ := strings.Cut(line, " ")
		b := batches[tag]
		if b == nil {
			t.Errorf("kill %d: the child wrote %s, but no record of it is stored", iter, tag)
			continue
		}
		ok := true
		switch step {
		case "promoted":
			ok = count[store.OpPromote][b.ids[0]] == 1
		case "corroborated":
			ok = len(byID[b.ids[0]].Supports) == 1
		case "approved":
			ok = rows[b.ids[1]]
		case "invalidated":
			ok = byID[b.ids[2]].InvalidAt != ""
		case "demoted":
			ok = !rows[b.ids[0]]
		case "deleted":
			_, stored := byID[b.ids[3]]
			ok = !stored && count[store.OpDelete][b.ids[3]] == 1
		}
		if !ok {
			t.Errorf("kill %d: the child %s %s, which the file does not show", iter, step, tag)
		}
	}
	return ops
}

// v0Records is the size of the version-0 file TestSIGKILLDuringMigration
// migrates: large enough that the migration takes a while.
const v0Records = 1500

// TestSIGKILLDuringMigration kills a child process while it migrates a
// version-0 file (one transaction: new buckets, rewritten records, one import
// entry each), 10 times on fresh copies. Afterwards the file opens (and
// migrates if the kill came first), every record is there once, there is
// exactly one import entry per record, and the ledger verifies. The kill
// delay halves whenever a kill lands after the migration committed, so most
// kills land inside it.
func TestSIGKILLDuringMigration(t *testing.T) {
	t.Parallel()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	dir := t.TempDir()
	template := filepath.Join(dir, "v0.db")
	recs := make([]schema.MemoryRecord, v0Records)
	gen := schema.NewIDGenerator(rand.New(rand.NewSource(seed)))
	at := time.Date(2026, 10, 1, 10, 0, 0, 0, time.UTC)
	for i := range recs {
		id, err := gen.New(at)
		if err != nil {
			t.Fatal(err)
		}
		ts := schema.FormatTime(at.Add(time.Duration(i) * time.Second))
		recs[i] = schema.MemoryRecord{ID: id, Scope: map[string]string{"project": "web"}, Kind: schema.KindFact,
			Content: fmt.Sprintf("old fact %d %s", i, strings.Repeat("padding ", 20)), CreatedAt: ts, UpdatedAt: ts}
	}
	writeV0(t, template, recs, nil)
	data, err := os.ReadFile(template)
	if err != nil {
		t.Fatal(err)
	}

	bound := 400 * time.Millisecond
	inside := 0
	for try := range 10 {
		path := filepath.Join(dir, fmt.Sprintf("try%d.db", try))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		out := &lockedBuffer{ready: make(chan struct{})}
		cmd := reliabilityCmd("migrate " + path)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = out, &stderr
		cmd.WaitDelay = 10 * time.Second
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waited := make(chan error, 1)
		go func() { waited <- cmd.Wait() }()
		select {
		case <-out.ready:
		case err := <-waited:
			t.Fatalf("try %d: child exited before it was ready: %v\n%s", try, err, stderr.String())
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			t.Fatalf("try %d: child never became ready", try)
		}
		time.Sleep(time.Duration(rng.Int63n(int64(bound))))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		if err := <-waited; err != nil && !strings.Contains(err.Error(), "killed") {
			t.Fatalf("try %d: child failed: %v\n%s", try, err, stderr.String())
		}
		if strings.Contains(out.String(), "migrated") {
			bound /= 2
		} else {
			inside++
		}

		s, err := Open(path, store.Options{LockTimeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("try %d: Open after SIGKILL: %v", try, err)
		}
		ctx := context.Background()
		res, err := s.Search(ctx, store.Query{Limit: store.Limit(store.Unlimited)})
		if err != nil || len(res.Records) != v0Records || res.Skipped != 0 {
			t.Errorf("try %d: %d records (skipped %d, err %v), want %d", try, len(res.Records), res.Skipped, err, v0Records)
		}
		seen := map[string]int{}
		for _, r := range res.Records {
			seen[r.ID]++
		}
		for _, r := range recs {
			if seen[r.ID] != 1 {
				t.Errorf("try %d: record %s present %d times", try, r.ID, seen[r.ID])
				break
			}
		}
		entries, err := s.Ledger(ctx, store.LedgerFilter{})
		if err != nil {
			t.Fatal(err)
		}
		imports := map[string]int{}
		for _, e := range entries {
			if e.Op != store.OpImport {
				t.Errorf("try %d: ledger entry %d is %s, want import", try, e.Seq, e.Op)
			}
			imports[e.RecordID]++
		}
		if len(entries) != v0Records || len(imports) != v0Records {
			t.Errorf("try %d: %d ledger entries for %d records, want one import each of %d", try, len(entries), len(imports), v0Records)
		}
		if err := s.Verify(ctx); err != nil {
			t.Errorf("try %d: Verify: %v", try, err)
		}
		s.Close()
		if t.Failed() {
			t.Fatalf("after try %d (seed %d)", try, seed)
		}
	}
	t.Logf("%d of 10 kills landed before the migration committed (final delay bound %s)", inside, bound)
	if inside == 0 {
		t.Error("no kill landed before the migration committed")
	}
}
