package engine

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/store"
)

func TestZZOverview(t *testing.T) {
	ws := os.Getenv("ZZ_WS")
	if ws == "" {
		t.Skip()
	}
	s, err := Resolve(boltOpener{}, Request{Start: ws, Getenv: func(k string) string {
		if k == "USER" {
			return "ana"
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	v := s.Verbs(store.Options{})
	for i := 0; i < 2; i++ {
		t0 := time.Now()
		ov, err := v.Overview(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("overview %v agents=%d proposals=%d conflicts=%d", time.Since(t0), len(ov.Agents), len(ov.Proposals), len(ov.Conflicts))
	}
}
