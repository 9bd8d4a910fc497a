package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/store"
)

// TestMemorySaveBatch: save-batch reconciles each line like `memory save`
// (later lines against earlier ones), answers per line, exits 1 when a
// line was not saved, and a file with a bad line saves nothing (exit 2). A human's
// lines name their own conversations (an agent's may not:
// TestSaveBatchProvenance).
func TestMemorySaveBatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "memory.db")
	lines := strings.Join([]string{
		`{"content":"Deploys go out on Tuesdays","target":"background.projectContext.deploy_window","conversation":"c1"}`,
		`{"content":"Deploys go out on Thursdays","target":"background.projectContext.deploy_window","conversation":"c2"}`,
		`{"content":"Ask for a design doc before large changes","target":"judgment.code-review.heuristics","conversation":"c1"}`,
		``,
		`{"content":"Ask for a design doc before big changes","target":"judgment.code-review.heuristics","conversation":"c2"}`,
		`{"kind":"preference","content":"an untargeted note","tags":["a"],"expires":"7d"}`,
	}, "\n")
	r := runBin(t, dir, lines, memEnv, "memory", "--store", db, "--format", "json", "save-batch", "--scope", "project=web,agent=bot", "--actor", "human:ana", "-")
	if r.code != exitFindings || !strings.Contains(r.stderr, "1 of 5 line(s) not saved") {
		t.Fatalf("save-batch: exit %d, stderr %q; want 1 and one line not saved", r.code, r.stderr)
	}
	answers := decodeJSON[[]batchAnswer](t, r)
	want := []struct {
		line         int
		status       string
		corroborated bool
	}{{1, string(engine.SaveSaved), false}, {2, string(engine.SaveConflict), false}, {3, string(engine.SaveSaved), false}, {5, string(engine.SaveSaved), true}, {6, string(engine.SaveSaved), false}}
	if len(answers) != len(want) {
		t.Fatalf("answers %+v", answers)
	}
	for i, w := range want {
		a := answers[i]
		if a.Line != w.line || string(a.Status) != w.status || a.Corroborated != w.corroborated {
			t.Errorf("answer %d: line %d %s corroborated=%v, want line %d %s corroborated=%v (%s)", i, a.Line, a.Status, a.Corroborated, w.line, w.status, w.corroborated, a.Guidance)
		}
	}
	if answers[1].Existing == nil || answers[1].Existing.ID != answers[0].Record.ID {
		t.Errorf("line 2 conflicts with %+v, want line 1's record", answers[1].Existing)
	}
	if answers[3].Record.ID != answers[2].Record.ID {
		t.Errorf("line 5 corroborated %s, want line 3's record %s", answers[3].Record.ID, answers[2].Record.ID)
	}
	l := listJSON(t, dir, db, "list", "--all", "--scope", "project=web")
	if len(l.Records) != 3 {
		t.Errorf("stored %d records, want 3 (the conflict and the corroboration mint none)", len(l.Records))
	}
	for _, rec := range l.Records {
		if rec.Scope[store.AgentKey] != "bot" {
			t.Errorf("record %s scope %v: the saves carry the scope's agent key", rec.ID, rec.Scope)
		}
	}
	mustOK(t, mem(t, dir, db, "ledger", "--verify"), "ledger --verify")

	// A bad line anywhere: nothing of the file is saved.
	bad := `{"content":"fine","target":"judgment.code-review.heuristics"}` + "\n" + `{"content":"x","colour":"red"}`
	r = runBin(t, dir, bad, memEnv, "memory", "--store", db, "save-batch", "--scope", "project=web", "--actor", "agent:bot", "-")
	if r.code != exitUsage || !strings.Contains(r.stderr, "-:2:") || !strings.Contains(r.stderr, "nothing saved") {
		t.Errorf("save-batch with a bad line: exit %d, stderr %q", r.code, r.stderr)
	}
	if l2 := listJSON(t, dir, db, "list", "--all", "--scope", "project=web"); len(l2.Records) != 3 {
		t.Errorf("a rejected file saved records: %d stored, want 3", len(l2.Records))
	}
}

// TestSaveBatchBadLinesExit2: every kind of bad line is invalid input:
// exit 2 naming FILE:LINE, nothing of the file saved (the store is not even
// created), whatever the kind of fault. A malformed JSON line exited 1 and
// a line with a control character 2. --help says what each exit code means.
func TestSaveBatchBadLinesExit2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := `{"content":"Deploys go out on Thursdays","target":"background.projectContext.deploy_window","conversation":"c1"}`
	for _, tc := range []struct{ name, line string }{
		{"malformed JSON", `{"content": "x",, }`},
		{"unknown field", `{"content":"x","colour":"red"}`},
		{"two values", `{"content":"x"} {}`},
		{"control character", `{"content":"ring the bell \u0007 now"}`},
		{"escape sequence", `{"content":"\u001b[31mred\u001b[0m"}`},
		{"no content", `{"content":"  "}`},
		{"bad kind", `{"kind":"rumour","content":"x"}`},
		{"bad target", `{"content":"x","target":"judgment.refunds.nope"}`},
		{"bad payload", `{"content":"x","target":"example","payload":"not an object"}`},
		{"past expiry", `{"content":"x","expires":"2000-01-01T00:00:00Z"}`},
		{"bad conversation", `{"content":"x","conversation":"c\u0000"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".db")
			r := runBin(t, dir, good+"\n"+tc.line+"\n", memEnv, "memory", "--store", db, "save-batch", "--actor", "human:ana", "-")
			if r.code != exitUsage || !strings.Contains(r.stderr, "-:2:") || !strings.Contains(r.stderr, "nothing saved") || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 naming -:2: and nothing saved", r.code, r.stdout, r.stderr)
			}
			if _, err := os.Stat(db); !os.IsNotExist(err) {
				t.Errorf("a refused batch created the store (stat: %v)", err)
			}
		})
	}
	help := runBin(t, dir, "", nil, "memory", "save-batch", "--help").stdout
	for _, want := range []string{"Exit 0", "1 ", "2 ", "nothing of the file is saved"} {
		if !strings.Contains(help, want) {
			t.Errorf("save-batch --help lacks %q:\n%s", want, help)
		}
	}
}
