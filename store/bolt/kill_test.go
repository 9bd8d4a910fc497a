package bolt

import (
	"bufio"
	"bytes"
	"context"
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

// maxBatch is the largest batch the killed writer writes.
const maxBatch = 12

var killer = store.Actor{Kind: store.ActorSystem, Name: "kill-test"}

// TestReliabilityHelper is not a test: TestSIGKILLWriter and
// TestSoakConcurrentProcesses run the test binary again with reliabilityEnv
// set, and this function is the child.
//
//	killwriter PATH ITER SEED   loop until killed: write a batch tagged
//	                            batch:ITER-K and size:N, print "wrote TAG",
//	                            promote its first record, print "promoted TAG",
//	                            corroborate it, print "corroborated TAG"
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
	case "soaker":
		err = soakChild(args[1:])
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
	rng := rand.New(rand.NewSource(seed))
	s, err := Open(path, store.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := context.Background()
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, a ...any) {
		fmt.Fprintf(out, format+"\n", a...)
		_ = out.Flush()
	}
	say("ready")
	for k := 0; ; k++ {
		tag := fmt.Sprintf("batch:%s-%d", iter, k)
		n := 1 + rng.Intn(maxBatch)
		batch := make([]store.WriteRequest, n)
		for i := range batch {
			// Contents of up to ~3 KB so a batch spans several pages.
			pad := strings.Repeat(fmt.Sprintf("%s/%d ", tag, i), rng.Intn(200))
			batch[i] = store.WriteRequest{Kind: schema.KindFact, Content: fmt.Sprintf("%s record %d %s", tag, i, pad),
				Tags: []string{tag, "size:" + strconv.Itoa(n)}, Scope: map[string]string{"iter": iter}}
		}
		recs, err := s.Write(ctx, batch, killer)
		if err != nil {
			return err
		}
		say("wrote %s", tag)
		if _, err := s.Promote(ctx, recs[0].ID, store.PromoteRequest{Tier: schema.TierAuto, Actor: killer,
			Evidence: store.Evidence{Note: tag}}); err != nil {
			return err
		}
		say("promoted %s", tag)
		if _, err := s.Corroborate(ctx, recs[0].ID, schema.Support{ConversationID: "conv-" + tag}, killer); err != nil {
			return err
		}
		say("corroborated %s", tag)
	}
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

// TestSIGKILLWriter kills a child process that writes, promotes and
// corroborates in a loop with SIGKILL at a random moment, AGENT_LS_KILLS
// times (default 50) on the same file. After every kill the database opens
// read-write, the ledger verifies, every batch is entirely present or
// entirely absent, every batch, promotion and corroboration the child saw
// succeed is there, every record has exactly one write entry, and every
// promotion row and support has its ledger entry.
func TestSIGKILLWriter(t *testing.T) {
	kills := envInt(t, killsEnv, defaultKills)
	seed := time.Now().UnixNano()
	t.Logf("seed %d, %d kills", seed, kills)
	rng := rand.New(rand.NewSource(seed))
	path := filepath.Join(t.TempDir(), "killed.db")
	acked := map[string]bool{} // "wrote TAG", "promoted TAG", "corroborated TAG"
	midBatch := 0
	for iter := range kills {
		out := &lockedBuffer{ready: make(chan struct{})}
		cmd := reliabilityCmd(fmt.Sprintf("killwriter %s %d %d", path, iter, rng.Int63()))
		cmd.Stdout = out
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
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
			t.Fatalf("kill %d: %v", iter, err)
		}
		err := <-waited
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("kill %d: writer ended with %v before the kill, not by SIGKILL\n%s", iter, err, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		for _, l := range lines[1:] {
			acked[l] = true
		}
		if last := lines[len(lines)-1]; !strings.HasPrefix(last, "corroborated ") {
			midBatch++ // killed between a batch's write and its corroboration, or inside the write
		}
		checkAfterKill(t, iter, path, acked)
		if t.Failed() {
			t.Fatalf("after kill %d (seed %d)", iter, seed)
		}
	}
	t.Logf("%d of %d kills landed before the batch's last step completed", midBatch, kills)
}

// checkAfterKill asserts the invariants of TestSIGKILLWriter on the file.
func checkAfterKill(t *testing.T, iter int, path string, acked map[string]bool) {
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
	type batch struct {
		want  int
		ids   []string
		first string
	}
	batches := map[string]*batch{}
	byID := map[string]schema.MemoryRecord{}
	for _, r := range res.Records {
		byID[r.ID] = r
		if len(r.Tags) != 2 || !strings.HasPrefix(r.Tags[0], "batch:") || !strings.HasPrefix(r.Tags[1], "size:") {
			t.Errorf("kill %d: record %s has tags %v", iter, r.ID, r.Tags)
			continue
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(r.Tags[1], "size:"))
		b := batches[r.Tags[0]]
		if b == nil {
			b = &batch{want: n}
			batches[r.Tags[0]] = b
		}
		b.ids = append(b.ids, r.ID)
		if strings.HasPrefix(r.Content, r.Tags[0]+" record 0 ") {
			b.first = r.ID
		}
	}
	for tag, b := range batches {
		if len(b.ids) != b.want {
			t.Errorf("kill %d: batch %s has %d of its %d records", iter, tag, len(b.ids), b.want)
		}
	}

	entries, err := s.Ledger(ctx, store.LedgerFilter{})
	if err != nil {
		t.Fatalf("kill %d: Ledger: %v", iter, err)
	}
	writes := map[string]int{}
	promotes := map[string]int{}
	corroborates := map[string]int{}
	for _, e := range entries {
		switch e.Op {
		case store.OpWrite:
			writes[e.RecordID]++
		case store.OpPromote:
			promotes[e.RecordID]++
		case store.OpCorroborate:
			corroborates[e.RecordID]++
		default:
			t.Errorf("kill %d: unexpected ledger op %s", iter, e.Op)
		}
	}
	for id := range byID {
		if writes[id] != 1 {
			t.Errorf("kill %d: record %s has %d write entries, want 1", iter, id, writes[id])
		}
	}
	for id := range writes {
		if _, ok := byID[id]; !ok {
			t.Errorf("kill %d: write entry for %s, which is not stored", iter, id)
		}
	}

	// Promotion rows, read straight from the bucket: each has its entry.
	rows := map[string]bool{}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("kill %d: raw open: %v", iter, err)
	}
	_ = db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketPromotions).ForEach(func(k, _ []byte) error {
			rows[string(k)] = true
			return nil
		})
	})
	db.Close()
	for id := range rows {
		if promotes[id] != 1 {
			t.Errorf("kill %d: promotion row for %s with %d promote ledger entries, want 1", iter, id, promotes[id])
		}
		if _, ok := byID[id]; !ok {
			t.Errorf("kill %d: promotion row for %s, which is not stored", iter, id)
		}
	}
	for id := range promotes {
		if !rows[id] {
			t.Errorf("kill %d: promote entry for %s without its promotion row", iter, id)
		}
	}
	for id, r := range byID {
		if len(r.Supports) != corroborates[id] {
			t.Errorf("kill %d: record %s has %d supports and %d corroborate entries", iter, id, len(r.Supports), corroborates[id])
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
		switch step {
		case "promoted":
			if !rows[b.first] {
				t.Errorf("kill %d: the child promoted %s's first record, but it has no promotion row", iter, tag)
			}
		case "corroborated":
			if r := byID[b.first]; len(r.Supports) != 1 {
				t.Errorf("kill %d: the child corroborated %s's first record, which has %d supports", iter, tag, len(r.Supports))
			}
		}
	}
}
