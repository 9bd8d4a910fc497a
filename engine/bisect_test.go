package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/memstore"
)

func score(s float64, passed, failed int) SuiteResult {
	return SuiteResult{Score: &s, Passed: passed, Failed: failed}
}

// TestBisectSearchFindsEveryPosition: for every history length n up to 40
// and every poisoned point p (points p..n regress), BisectSearch returns p
// with at most MaxBisectRuns(n) = ⌈log₂ n⌉ + 2 eval calls, evaluating good
// and bad once each; 16 points take at most 6 calls.
func TestBisectSearchFindsEveryPosition(t *testing.T) {
	if got := MaxBisectRuns(16); got != 6 {
		t.Fatalf("MaxBisectRuns(16) = %d, want 6", got)
	}
	for n := 1; n <= 40; n++ {
		for p := 1; p <= n; p++ {
			calls := map[int]int{}
			first, steps, err := BisectSearch(context.Background(), n, func(_ context.Context, i int) (SuiteResult, error) {
				calls[i]++
				if i >= p {
					return score(0.5, 1, 1), nil
				}
				return score(1, 2, 0), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			total := 0
			for i, c := range calls {
				total += c
				if c != 1 {
					t.Fatalf("n=%d p=%d: point %d evaluated %d times", n, p, i, c)
				}
			}
			if first != p || total > MaxBisectRuns(n) || len(steps) != total {
				t.Fatalf("n=%d p=%d: first %d after %d calls (max %d), %d steps", n, p, first, total, MaxBisectRuns(n), len(steps))
			}
			if calls[0] != 1 || calls[n] != 1 {
				t.Fatalf("n=%d p=%d: good and bad not each evaluated once: %v", n, p, calls)
			}
		}
	}
}

// TestBisectSearchNoRegression: bad scoring as good (or better) is no
// regression after exactly two calls; fewer passed cases at the same score
// is one.
func TestBisectSearchNoRegression(t *testing.T) {
	calls := 0
	first, _, err := BisectSearch(context.Background(), 16, func(_ context.Context, i int) (SuiteResult, error) {
		calls++
		return score(1, 2, 0), nil
	})
	if err != nil || first != 0 || calls != 2 {
		t.Fatalf("first %d, %d calls, %v; want 0, 2, nil", first, calls, err)
	}
	first, _, err = BisectSearch(context.Background(), 4, func(_ context.Context, i int) (SuiteResult, error) {
		if i >= 3 {
			return score(1, 1, 0), nil
		}
		return score(1, 2, 0), nil
	})
	if err != nil || first != 3 {
		t.Fatalf("fewer passed: first %d, %v; want 3", first, err)
	}
}

// TestBisectSearchEvalError: an eval failure ends the search with that
// error, at any call: never a guess.
func TestBisectSearchEvalError(t *testing.T) {
	boom := errors.New("eval crashed")
	for fail := 0; fail < 4; fail++ {
		calls := 0
		first, _, err := BisectSearch(context.Background(), 16, func(_ context.Context, i int) (SuiteResult, error) {
			calls++
			if calls > fail {
				return SuiteResult{}, boom
			}
			if i >= 5 {
				return score(0, 0, 2), nil
			}
			return score(1, 2, 0), nil
		})
		if !errors.Is(err, boom) || first != 0 || calls != fail+1 {
			t.Fatalf("failing call %d: first %d, %d calls, err %v", fail+1, first, calls, err)
		}
	}
	if _, _, err := BisectSearch(context.Background(), 0, nil); err == nil {
		t.Fatal("n=0: no error")
	}
}

// TestBisectPointErrors: a good or bad ledger point that is not one is a
// *schema.ValueError named good or bad, worded with no surface's
// parameter: the engine said "--good 999: ...", the CLI's flag.
func TestBisectPointErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memstore.New(store.Options{})
	if _, err := st.Write(ctx, []store.WriteRequest{{Kind: schema.KindFact, Content: "a fact"}}, store.Actor{Kind: store.ActorHuman, Name: "ana"}); err != nil {
		t.Fatal(err)
	}
	agent, err := LoadAgent("deploy.agent.yaml", []byte(minimalAgent("deploy")))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ good, bad, name, want string }{
		{"999", "", "good", `good "999": the ledger ends at entry 1`},
		{"", "soon", "bad", `bad "soon": want a ledger sequence number or an RFC 3339 time`},
	} {
		_, err := Bisect(ctx, BisectRequest{Agent: agent, Store: st, Good: tc.good, Bad: tc.bad, Suite: noSuite{}})
		ve, ok := err.(*schema.ValueError)
		if !ok || ve.Name != tc.name || err.Error() != tc.want {
			t.Errorf("Bisect good %q bad %q: %v (%T); want a *schema.ValueError %q", tc.good, tc.bad, err, err, tc.want)
		}
	}
}

type noSuite struct{}

func (noSuite) RunSuite(context.Context, *schema.AgentConfig) (SuiteResult, string, error) {
	return SuiteResult{}, "no suite", nil
}
