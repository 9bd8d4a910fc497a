package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/postgres"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
)

// childEnv names the store a re-executed test binary writes to
// (TestChildWriter).
const childEnv = "AGENT_LS_PG_CHILD_URL"

// TestChildWriter is not a test: run as a child process with childEnv set,
// it saves one fact through its own postgres.Open, as another agent-ls
// process would.
func TestChildWriter(t *testing.T) {
	loc := os.Getenv(childEnv)
	if loc == "" {
		t.Skip("child process helper")
	}
	s, err := postgres.Open(context.Background(), loc, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Write(context.Background(), []store.WriteRequest{{Kind: schema.KindFact, Content: os.Getenv("AGENT_LS_PG_CHILD_CONTENT")}}, store.Actor{Kind: store.ActorAgent, Name: "child"}); err != nil {
		t.Fatal(err)
	}
}

// writeFromChild runs TestChildWriter in a child process against loc.
func writeFromChild(t *testing.T, loc, content string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildWriter$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+loc, "AGENT_LS_PG_CHILD_CONTENT="+content)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child writer: %v\n%s", err, out)
	}
}

// TestListenerWakesOnAnotherProcessWrite: a follower learns of another
// process's commit within a second, by NOTIFY alone, by polling alone
// (a pooler in transaction mode), and again after its connection was
// killed (it reconnects with backoff).
func TestListenerWakesOnAnotherProcessWrite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts postgres.ListenOptions
		kill bool
	}{
		{"notify only", postgres.ListenOptions{Poll: -1}, false},
		{"polling only", postgres.ListenOptions{NoListen: true, Poll: 100 * time.Millisecond}, false},
		{"reconnects after its connection is killed", postgres.ListenOptions{Poll: -1, MaxBackoff: 200 * time.Millisecond}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			loc := pgtest.Fresh(t)
			s, err := postgres.Open(context.Background(), loc, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// The listener is named after its test, so the kill below cuts
			// this listener only, not those of tests running beside it on
			// the same cluster (the language server's, in another package).
			// (Short: the server cuts an application_name at 63 bytes.)
			app := fmt.Sprintf("agent-ls-listen-%d", time.Now().UnixNano())
			lloc := loc + sep(loc) + "application_name=" + url.QueryEscape(app)
			ch, err := postgres.NewListener(lloc, tc.opts).Watch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.kill {
				pgtest.Exec(t, loc, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '`+app+`'`)
				// The reconnection wakes the follower: commits may have been missed.
				await(t, ch, 3*time.Second, "a wake-up after reconnecting")
			}
			// The child has committed when it exits: the wake-up must come
			// within a second of that (it may be pending already).
			writeFromChild(t, loc, "written by another process")
			await(t, ch, time.Second, "a wake-up within a second of another process's commit")
			select {
			case <-ch:
				t.Errorf("a second wake-up for one write")
			case <-time.After(3 * pollOr(tc.opts.Poll)):
			}
		})
	}
}

func pollOr(d time.Duration) time.Duration {
	if d <= 0 {
		return 100 * time.Millisecond
	}
	return d
}

func await(t *testing.T, ch <-chan struct{}, limit time.Duration, what string) {
	t.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatalf("the listener's channel closed waiting for %s", what)
		}
	case <-time.After(limit):
		t.Fatalf("no %s within %s", what, limit)
	}
}

// sep is the separator that adds a query parameter to loc.
func sep(loc string) string {
	if strings.Contains(loc, "?") {
		return "&"
	}
	return "?"
}
