package bolt

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// helperEnv switches the test binary into a child-process role; see
// TestHelperProcess.
const helperEnv = "AGENT_LS_BOLT_HELPER"

// Parameters of the multi-process test.
const (
	children      = 4
	writesPerProc = 12
	convsPerProc  = 4 // each corroborated twice: counted once
)

// TestHelperProcess is not a test: the multi-process and lock tests run the
// test binary again with helperEnv set, and this function is the child.
//
//	hold PATH          open PATH with raw bbolt (exclusive lock), print
//	                   "locked", hold it until stdin closes
//	writer PATH N ID   write writesPerProc records and corroborate record ID
//	                   from this child's conversations, retrying on ErrLocked
func TestHelperProcess(t *testing.T) {
	args := strings.Fields(os.Getenv(helperEnv))
	if len(args) == 0 {
		t.Skip("child-process helper")
	}
	if err := runHelper(args); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(3)
	}
	os.Exit(0)
}

func runHelper(args []string) error {
	switch args[0] {
	case "hold":
		db, err := bbolt.Open(args[1], 0o600, &bbolt.Options{Timeout: 5 * time.Second})
		if err != nil {
			return err
		}
		fmt.Println("locked")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		return db.Close()
	case "writer":
		n, _ := strconv.Atoi(args[2])
		shared := args[3]
		s, err := Open(args[1], store.Options{LockTimeout: 200 * time.Millisecond})
		for errors.Is(err, store.ErrLocked) {
			s, err = Open(args[1], store.Options{LockTimeout: 200 * time.Millisecond})
		}
		if err != nil {
			return err
		}
		defer s.Close()
		ctx := context.Background()
		actor := store.Actor{Kind: store.ActorAgent, Name: fmt.Sprintf("child-%d", n)}
		for i := range writesPerProc {
			req := store.WriteRequest{Kind: schema.KindEpisode, Content: fmt.Sprintf("child %d write %d", n, i),
				Scope: map[string]string{"child": strconv.Itoa(n)}}
			if err := retryLocked(func() error {
				_, err := s.Write(ctx, []store.WriteRequest{req}, actor)
				return err
			}); err != nil {
				return err
			}
			conv := fmt.Sprintf("conv-%d-%d", n, i%convsPerProc)
			if err := retryLocked(func() error {
				_, err := s.Corroborate(ctx, shared, schema.Support{ConversationID: conv, RunID: strconv.Itoa(i)}, actor)
				return err
			}); err != nil {
				return err
			}
			// Every child also corroborates one conversation they all
			// share: it must count once across processes.
			if err := retryLocked(func() error {
				_, err := s.Corroborate(ctx, shared, schema.Support{ConversationID: "conv-everyone"}, actor)
				return err
			}); err != nil {
				return err
			}
			if err := retryLocked(func() error {
				_, err := s.Search(ctx, store.Query{Scope: req.Scope})
				return err
			}); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown helper role %q", args[0])
}

// retryLocked retries fn while it reports ErrLocked, for up to a minute.
func retryLocked(fn func() error) error {
	deadline := time.Now().Add(time.Minute)
	for {
		err := fn()
		if !errors.Is(err, store.ErrLocked) || time.Now().After(deadline) {
			return err
		}
	}
}

func helperCmd(t *testing.T, role string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+role)
	return cmd
}

// TestMultiProcess runs child processes that write and corroborate one
// database file concurrently, each opening and closing it per operation.
func TestMultiProcess(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shared.db")
	s := openTest(t, path, store.Options{})
	ctx := context.Background()
	shared := writeOne(t, s, store.WriteRequest{Kind: schema.KindFact, Content: "a lesson every child corroborates",
		Provenance: schema.Provenance{ConversationID: "origin"}})

	cmds := make([]*exec.Cmd, children)
	outs := make([]*strings.Builder, children)
	for n := range children {
		cmds[n] = helperCmd(t, fmt.Sprintf("writer %s %d %s", path, n, shared.ID))
		outs[n] = &strings.Builder{}
		cmds[n].Stdout, cmds[n].Stderr = outs[n], outs[n]
		if err := cmds[n].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for n, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child %d: %v\n%s", n, err, outs[n])
		}
	}

	res, err := s.Search(ctx, store.Query{Kinds: []schema.Kind{schema.KindEpisode}, Limit: store.Limit(store.Unlimited)})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range res.Records {
		seen[r.Content]++
	}
	for n := range children {
		for i := range writesPerProc {
			c := fmt.Sprintf("child %d write %d", n, i)
			if seen[c] != 1 {
				t.Errorf("%q stored %d times, want once", c, seen[c])
			}
		}
	}
	if len(res.Records) != children*writesPerProc {
		t.Errorf("%d episodes stored, want %d", len(res.Records), children*writesPerProc)
	}

	got, err := s.Get(ctx, shared.ID)
	if err != nil {
		t.Fatal(err)
	}
	convs := map[string]int{}
	for _, sup := range got.Supports {
		convs[sup.ConversationID]++
	}
	wantConvs := children*convsPerProc + 1
	if len(got.Supports) != wantConvs || got.DistinctConversations() != wantConvs+1 {
		t.Errorf("shared record has %d supports (%d distinct conversations), want %d supports plus its origin", len(got.Supports), got.DistinctConversations(), wantConvs)
	}
	for c, k := range convs {
		if k != 1 {
			t.Errorf("conversation %s counted %d times", c, k)
		}
	}
	entries, err := s.Ledger(ctx, store.LedgerFilter{Ops: []store.Op{store.OpCorroborate}})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != wantConvs {
		t.Errorf("%d corroborate ledger entries, want %d", len(entries), wantConvs)
	}
	all, _ := s.Ledger(ctx, store.LedgerFilter{})
	if want := 1 + children*writesPerProc + wantConvs; len(all) != want {
		t.Errorf("%d ledger entries, want %d", len(all), want)
	}
	if err := s.Verify(ctx); err != nil {
		t.Errorf("Verify after concurrent processes: %v", err)
	}
}

// TestLockedByAnotherProcess: while a child holds the file, operations fail
// with ErrLocked after the lock timeout instead of hanging; once it lets go
// they succeed.
func TestLockedByAnotherProcess(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "held.db")
	s := openTest(t, path, store.Options{LockTimeout: 100 * time.Millisecond})
	ctx := context.Background()
	rec := writeOne(t, s, fact("before the lock", nil))

	cmd := helperCmd(t, "hold "+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "locked" {
		t.Fatalf("child did not take the lock: %q, %v", line, err)
	}

	ops := map[string]func() error{
		"write": func() error { _, err := s.Write(ctx, []store.WriteRequest{fact("during", nil)}, human); return err },
		"read":  func() error { _, err := s.Get(ctx, rec.ID); return err },
	}
	for name, op := range ops {
		done := make(chan error, 1)
		go func() { done <- op() }()
		select {
		case err := <-done:
			if !errors.Is(err, store.ErrLocked) {
				t.Errorf("%s while another process holds the file: err = %v, want ErrLocked", name, err)
			} else if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "retry") {
				t.Errorf("%s: error %q should name the file and advise a retry", name, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s hung while another process holds the file", name)
		}
	}

	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("holder: %v", err)
	}
	if _, err := s.Write(ctx, []store.WriteRequest{fact("after", nil)}, human); err != nil {
		t.Errorf("write after the holder exited: %v", err)
	}
}
