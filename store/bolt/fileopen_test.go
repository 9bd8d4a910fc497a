//go:build unix

package bolt

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/agent-ls/agent-ls/store"
)

// TestNotARegularFile puts a directory, a FIFO, a socket and a symlink (to
// a device) where the store should be: every open (read-write and
// read-only) and every operation of a handle opened before the swap returns
// at once — within the lock timeout — with an error that says what the path
// is, and nothing is created or written there.
func TestNotARegularFile(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, tc := range []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "is a directory"},
		{"fifo", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "is a FIFO"},
		{"socket", func(t *testing.T, path string) {
			l, err := net.Listen("unix", path)
			if err != nil {
				t.Skipf("unix socket: %v", err)
			}
			t.Cleanup(func() { _ = l.Close() })
		}, "is a socket"},
		{"symlink to a device", func(t *testing.T, path string) {
			if err := os.Symlink("/dev/null", path); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
	} {
		for _, ro := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/readonly=%v", tc.name, ro), func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "m.db")
				// A handle opened on a good file, then the file replaced.
				pre := filepath.Join(dir, "pre.db")
				before := openTest(t, pre, store.Options{LockTimeout: timeout, ReadOnly: ro})
				tc.make(t, path)
				if err := os.Remove(pre); err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Fatal(err)
				}
				tc.make(t, pre)
				ctx := context.Background()
				start := time.Now()
				var errs []error
				_, err := Open(path, store.Options{LockTimeout: timeout, ReadOnly: ro})
				errs = append(errs, err)
				_, err = before.Search(ctx, store.Query{})
				errs = append(errs, err)
				if !ro {
					_, err = before.Write(ctx, []store.WriteRequest{fact("x", nil)}, human)
					errs = append(errs, err)
				}
				if d := time.Since(start); d > timeout {
					t.Errorf("took %s, more than the lock timeout %s", d, timeout)
				}
				for i, err := range errs {
					if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), tc.want) {
						t.Errorf("call %d: err = %v, want ErrNotRegular saying %q", i, err, tc.want)
					}
				}
				if ents, _ := os.ReadDir(dir); len(ents) != 2 {
					t.Errorf("directory holds %d entries, want the 2 made by the test", len(ents))
				}
			})
		}
	}
}

// TestEmptyFileIsAFreshStore: a 0-byte file (what a crash at creation left
// before creation was atomic) reads as an empty store and a read-write open
// initializes it; it never fails with a write on a read-only descriptor.
func TestEmptyFileIsAFreshStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ro := openTest(t, path, store.Options{ReadOnly: true})
	if res, err := ro.Search(ctx, store.Query{}); err != nil || len(res.Records) != 0 {
		t.Fatalf("read-only search of a 0-byte file = %v, %v; want empty", res.Records, err)
	}
	if err := ro.Verify(ctx); err != nil {
		t.Fatalf("verify of a 0-byte file: %v", err)
	}
	rw := openTest(t, path, store.Options{})
	if _, err := rw.Write(ctx, []store.WriteRequest{fact("first", nil)}, human); err != nil {
		t.Fatalf("write to an initialized 0-byte file: %v", err)
	}
	if res, err := ro.Search(ctx, store.Query{}); err != nil || len(res.Records) != 1 {
		t.Fatalf("after the write: %d records, %v", len(res.Records), err)
	}
}

// TestLockWaitEndsWithContext: a writer waiting for a lock another process
// holds gives up when its context ends, long before a long lock timeout.
func TestLockWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	path, _ := goodDB(t, 1)
	holder, err := bbolt.Open(path, 0o600, nil) // holds the exclusive lock
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	s := &Store{}
	for _, ro := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		start := time.Now()
		s, err = OpenContext(ctx, path, store.Options{LockTimeout: time.Minute, ReadOnly: ro})
		if err == nil {
			_, err = s.Search(ctx, store.Query{})
		}
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("readonly=%v: err = %v, want the context's deadline", ro, err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("readonly=%v: returned after %s", ro, d)
		}
	}
}

// TestBitFlipsNameAPage flips bytes in every page header of a store: no
// operation panics or reports the runtime's own message; reads either work
// or fail with store.ErrCorrupt.
func TestBitFlipsNameAPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path, _ := goodDB(t, 80)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := os.Getpagesize()
	r := rand.New(rand.NewSource(7))
	for off := 2 * ps; off < len(good); off += ps {
		for _, field := range []int{0, 8, 10, 12} { // id, flags, count, overflow
			data := append([]byte(nil), good...)
			data[off+field] ^= byte(1 + r.Intn(255))
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(path, store.Options{ReadOnly: true})
			if err == nil {
				_, err = s.Search(ctx, store.Query{IncludeInvalidated: true, Limit: store.Limit(store.Unlimited)})
				if err == nil {
					err = s.Verify(ctx)
				}
			}
			if err == nil {
				continue
			}
			if !errors.Is(err, store.ErrCorrupt) {
				t.Errorf("page at %d field %d: err = %v, want ErrCorrupt", off/ps, field, err)
			}
			if msg := err.Error(); strings.Contains(msg, "runtime error") || strings.Contains(msg, "nil pointer") {
				t.Errorf("page at %d field %d: error shows the runtime's message: %v", off/ps, field, err)
			}
		}
	}
}

// TestSIGKILLAtCreation kills (SIGKILL) a child that creates store after
// store, at a random moment of its run, AGENT_LS_KILLS times (default 50):
// every store path afterwards is absent or a store that opens, takes a
// write and verifies; none is a 0-byte or partial file.
func TestSIGKILLAtCreation(t *testing.T) {
	t.Parallel()
	kills := envInt(t, killsEnv, defaultKills)
	root := t.TempDir()
	r := rand.New(rand.NewSource(time.Now().UnixNano()))
	deadline := time.Now().Add(2 * time.Minute)
	for k := 0; k < kills; k++ {
		if time.Now().After(deadline) {
			t.Fatalf("only %d kills in 2 minutes", k)
		}
		dir := filepath.Join(root, fmt.Sprint(k))
		cmd := reliabilityCmd("creator " + dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill after a random number of "creating" lines: mid-way through
		// one of the creations.
		lines := bufio.NewScanner(out)
		want := 1 + r.Intn(4)
		for n := 0; n < want && lines.Scan(); {
			if strings.HasPrefix(lines.Text(), "creating") {
				n++
			}
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			p := filepath.Join(dir, e.Name(), "memory.db")
			if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
				continue
			}
			s, err := Open(p, store.Options{LockTimeout: 5 * time.Second})
			if err != nil {
				t.Fatalf("kill %d: %s does not open: %v", k, p, err)
			}
			if _, err := s.Write(context.Background(), []store.WriteRequest{fact("after the kill", nil)}, human); err != nil {
				t.Fatalf("kill %d: %s takes no write: %v", k, p, err)
			}
			if err := s.Verify(context.Background()); err != nil {
				t.Fatalf("kill %d: %s: %v", k, p, err)
			}
			_ = s.Close()
		}
	}
}

// creator is the child of TestSIGKILLAtCreation: it creates stores
// DIR/0/memory.db, DIR/1/memory.db, ... each with one write, printing
// "creating N" before each, until killed.
func creator(dir string) error {
	for i := 0; ; i++ {
		fmt.Printf("creating %d\n", i)
		p := filepath.Join(dir, fmt.Sprint(i), "memory.db")
		s, err := Open(p, store.Options{LockTimeout: 5 * time.Second})
		if err != nil {
			return err
		}
		if _, err := s.Write(context.Background(), []store.WriteRequest{fact("created", nil)}, human); err != nil {
			return err
		}
		_ = s.Close()
	}
}
