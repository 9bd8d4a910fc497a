package lsp

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
)

// TestLintEngineCancelled: the lint engine hands the context to lint.Run
// and reports a run stopped by it as the context's error (the server drops
// it), so a pass over a big store ends when the server exits.
func TestLintEngineCancelled(t *testing.T) {
	t.Parallel()
	const text = `roleTemplate:
  name: support-bot
  persona:
    identity: a support agent
  judgments:
    - domain: refunds
      constraints:
        - Never refund an order older than 90 days
mission:
  objective: resolve tickets
`
	doc, cfg, ps0, err := schema.LoadAgent("deploy.agent.yaml", []byte(text))
	if err != nil || cfg == nil {
		t.Fatalf("load agent: %v %v", err, ps0)
	}
	tests := []struct {
		name    string
		cancel  bool
		wantErr error
	}{
		{"live", false, nil},
		{"cancelled", true, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				cancel()
			}
			ps, err := LintEngine()(ctx, LintInput{Filename: "deploy.agent.yaml", Doc: doc, Agent: cfg, Now: time.Now()})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if err != nil && ps != nil {
				t.Errorf("a stopped run returned problems %v", ps)
			}
		})
	}
}
