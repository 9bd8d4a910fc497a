//go:build unix

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

// TestReadFileRegularOnly: ReadFile reads regular files within the size
// limit and refuses, without blocking, a named pipe, a directory and a
// device, and a file over the limit.
func TestReadFileRegularOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reg := filepath.Join(dir, "a.agent.yaml")
	if err := os.WriteFile(reg, []byte("x: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "p.agent.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.agent.yaml")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", int(schema.MaxDocumentSize)+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(reg); err != nil || string(data) != "x: 1\n" {
		t.Errorf("regular file: %q, %v", data, err)
	}
	for path, want := range map[string]string{fifo: "a FIFO (named pipe)", dir: "a directory", "/dev/null": "a character device"} {
		if _, err := ReadFile(path); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadFile(%s) = %v, want not a regular file (%s)", path, err, want)
		}
	}
	if _, err := ReadFile(big); err == nil || !strings.Contains(err.Error(), "more than the limit") {
		t.Errorf("oversized file: %v", err)
	}
}
