package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSaveBatchProvenance: issue 31, reproduction 6 — an agent's
// save-batch cannot manufacture recurrence: its lines may not name their
// own conversation (the runtime's --conversation is the batch's), so two
// lines of one lesson stay one conversation and never earn a promotion; a
// human's batch may name one per line, as import does.
func TestSaveBatchProvenance(t *testing.T) {
	t.Parallel()
	const lesson = "Pause the rollout when the worker queue depth doubles"
	write := func(w *evoWorkspace, body string) string {
		f := filepath.Join(w.dir, "b.jsonl")
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	named := `{"content":"` + lesson + `","target":"judgment.deploy.heuristics","conversation":"b1"}` + "\n" +
		`{"content":"` + lesson + `","target":"judgment.deploy.heuristics","conversation":"b2"}` + "\n"
	plain := `{"content":"` + lesson + `","target":"judgment.deploy.heuristics"}` + "\n" +
		`{"content":"` + lesson + `","target":"judgment.deploy.heuristics"}` + "\n"

	t.Run("agent lines naming conversations", func(t *testing.T) {
		t.Parallel()
		w := newEvoWorkspace(t, "")
		r := w.cli(append(append([]string{"memory", "save-batch"}, identAG...), write(w, named))...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "b.jsonl:1: an agent's batch takes its conversation") || strings.Contains(r.stdout, "promoted") {
			t.Fatalf("exit %d, %s%s; want exit 2 naming line 1, nothing promoted", r.code, r.stdout, r.stderr)
		}
		if l := w.cli("memory", "list", "--all"); strings.Contains(l.stdout, "queue depth") {
			t.Errorf("a refused batch stored:\n%s", l.stdout)
		}
	})
	t.Run("agent batch is one conversation", func(t *testing.T) {
		t.Parallel()
		w := newEvoWorkspace(t, "")
		r := w.cli(append(append([]string{"memory", "save-batch"}, identAG...), "--conversation", "b1", write(w, plain))...)
		if r.code != exitOK || strings.Contains(r.stdout, "promoted") {
			t.Fatalf("exit %d, %s%s; want saved, never promoted", r.code, r.stdout, r.stderr)
		}
		if out := w.cli("render", "deploy.agent.yaml").stdout; strings.Contains(strings.SplitN(out, "## Recalled Memory", 2)[0], "queue depth") {
			t.Errorf("one conversation promoted the lesson:\n%s", out)
		}
	})
	t.Run("human batch may name conversations", func(t *testing.T) {
		t.Parallel()
		w := newEvoWorkspace(t, "")
		r := w.cli("memory", "save-batch", "--actor", "human:ana", "--scope", "agent=deploy-ops", write(w, named))
		if r.code != exitOK || !strings.Contains(r.stdout, "promoted") {
			t.Fatalf("exit %d, %s%s; want the second line to promote (two conversations)", r.code, r.stdout, r.stderr)
		}
	})
}
