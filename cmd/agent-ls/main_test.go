package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// agentLSBin is the agent-ls binary built once by TestMain for every test of
// this package that runs the real command (exit codes, stdout, stderr).
var agentLSBin string

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		// A fuzz worker runs only the fuzz target, which needs no binary.
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "agent-ls-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "temp dir:", err)
		os.Exit(2)
	}
	agentLSBin = filepath.Join(dir, "agent-ls")
	// -buildvcs=auto: the binary carries the checkout's revision (TestVersion).
	build := exec.Command("go", "build", "-buildvcs=auto", "-o", agentLSBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build agent-ls:", err)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// binResult is what one run of the built binary produced.
type binResult struct {
	stdout, stderr string
	code           int
}

// runBin runs the built agent-ls with args in dir (the test's working
// directory when dir is ""), feeding stdin, and returns its output and exit
// code. Environment: the test process's, plus extra "KEY=VALUE" pairs.
func runBin(t *testing.T, dir string, stdin string, extraEnv []string, args ...string) binResult {
	t.Helper()
	cmd := exec.Command(agentLSBin, args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewBufferString(stdin)
	cmd.Env = append(os.Environ(), extraEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run agent-ls %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return binResult{stdout: out.String(), stderr: errb.String(), code: code}
}
