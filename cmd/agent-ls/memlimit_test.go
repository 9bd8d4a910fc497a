package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestServeMemoryLimit: a real `agent-ls serve` runs under its default soft
// memory limit (64 MiB) when GOMEMLIMIT is unset, and under GOMEMLIMIT's
// value when it is set (the runtime's own reading, logged at debug level).
func TestServeMemoryLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, env, want string
	}{
		{"default", "", `bytes=67108864 source="serve default"`},
		{"GOMEMLIMIT", "200MiB", "bytes=209715200 source=GOMEMLIMIT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, agentLSBin, "serve", "--no-watch", "--log-level", "debug")
			cmd.Dir = t.TempDir()
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + cmd.Dir}
			if tc.env != "" {
				cmd.Env = append(cmd.Env, "GOMEMLIMIT="+tc.env)
			}
			var stderr bytes.Buffer
			cmd.Stdin = strings.NewReader("") // EOF: the server ends at once
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("agent-ls serve: %v\n%s", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr does not report %q:\n%s", tc.want, stderr.String())
			}
		})
	}
}
