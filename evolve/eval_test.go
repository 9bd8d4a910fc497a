package evolve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/schema"
)

func evalScript(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "testdata", "eval", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func withHeuristic(t *testing.T, h string) *schema.AgentConfig {
	c := testAgent(t)
	c.RoleTemplate.Judgments[0].Heuristics = append(c.RoleTemplate.Judgments[0].Heuristics, h)
	return c
}

// TestCommandEvaluator runs real child processes for every gate outcome.
func TestCommandEvaluator(t *testing.T) {
	t.Parallel()
	check := []string{"sh", evalScript(t, "check-prompt.sh"), evalScript(t, "code-review-cases.txt")}
	big := filepath.Join(t.TempDir(), "big.sh")
	if err := os.WriteFile(big, []byte("#!/bin/sh\nhead -c 2000000 /dev/zero | tr '\\0' 'a'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		cfg       schema.EvalConfig
		candidate *schema.AgentConfig
		pass      bool
		regressed bool
		reason    string
	}{
		{"improvement passes", schema.EvalConfig{Command: check}, withHeuristic(t, "Flag unchecked errors on deferred Close calls"), true, false, "passed 5/6 → 6/6"},
		{"unchanged passes non-regression", schema.EvalConfig{Command: check}, withHeuristic(t, "Read the description first"), true, false, "score"},
		{"unchanged fails when improvement required", schema.EvalConfig{Command: check, Require: "improvement"}, withHeuristic(t, "Read the description first"), false, false, "no improvement"},
		{"regression fails", schema.EvalConfig{Command: check}, withHeuristic(t, "Skip the tests for docs-only changes"), false, true, "regression: score"},
		{"timeout fails", schema.EvalConfig{Command: []string{"sh", evalScript(t, "sleep.sh")}, Timeout: "300ms"}, testAgent(t), false, false, "timed out after 300ms"},
		{"crash fails", schema.EvalConfig{Command: []string{"sh", evalScript(t, "crash.sh")}}, testAgent(t), false, false, "suite exploded"},
		{"garbage fails", schema.EvalConfig{Command: []string{"sh", evalScript(t, "garbage.sh")}}, testAgent(t), false, false, "not the JSON result"},
		{"oversized output fails", schema.EvalConfig{Command: []string{"sh", big}}, testAgent(t), false, false, "exceeds"},
		{"missing command fails", schema.EvalConfig{Command: []string{filepath.Join(t.TempDir(), "nope")}}, testAgent(t), false, false, "eval command failed"},
		{"no command fails", schema.EvalConfig{}, testAgent(t), false, false, "no eval command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev := NewCommandEvaluator(tt.cfg, t.TempDir())
			out, err := ev.Evaluate(context.Background(), testAgent(t), tt.candidate)
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if out.Pass != tt.pass || out.Regressed != tt.regressed || !strings.Contains(out.Reason, tt.reason) {
				t.Fatalf("outcome %+v, want pass=%v regressed=%v reason containing %q", out, tt.pass, tt.regressed, tt.reason)
			}
		})
	}
}

func TestParseSuiteResult(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, why string
		score   float64
	}{
		{`{"score": 0.93, "passed": 41, "failed": 1}`, "", 0.93},
		{"progress...\n{\"score\": 1}\n", "", 1},
		{``, "empty", 0},
		{`{"passed": 3}`, `no "score"`, 0},
		{`{"score": "high"}`, "not the JSON result", 0},
		{`{"score": 1, "passed": -1}`, "negative", 0},
		{`[1,2]`, "not the JSON result", 0},
	}
	for _, tt := range tests {
		r, why := ParseSuiteResult([]byte(tt.in))
		if tt.why == "" {
			if why != "" || *r.Score != tt.score {
				t.Errorf("ParseSuiteResult(%q) = %+v, %q", tt.in, r, why)
			}
			continue
		}
		if !strings.Contains(why, tt.why) {
			t.Errorf("ParseSuiteResult(%q) why = %q, want %q", tt.in, why, tt.why)
		}
	}
}

// TestEvalGatedPromotion: an earned candidate with one conversation promotes
// through the eval gate when the suite improves, and is blocked when it
// regresses or the suite cannot run; the evidence carries the scores.
func TestEvalGatedPromotion(t *testing.T) {
	t.Parallel()
	check := schema.EvalConfig{Command: []string{"sh", evalScript(t, "check-prompt.sh"), evalScript(t, "code-review-cases.txt")}}
	tests := []struct {
		name, lesson string
		cfg          schema.EvalConfig
		want         Status
	}{
		{"pass", "Flag unchecked errors on deferred Close calls", check, StatusPromoted},
		{"regression", "Skip the tests for docs-only changes", check, StatusBlocked},
		{"crash", "Flag unchecked errors on deferred Close calls", schema.EvalConfig{Command: []string{"sh", evalScript(t, "crash.sh")}}, StatusBlocked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, func(c *Config) { c.Evaluator = NewCommandEvaluator(tt.cfg, t.TempDir()) })
			res := f.save(tt.lesson, "judgment.code-review.heuristics", "conv-1", agentKind)
			if res.State != StateCandidate {
				t.Fatalf("save: %+v", res)
			}
			o, err := f.eng.Promote(f.ctx, res.Record.ID, agentKind)
			if err != nil || o.Status != tt.want {
				t.Fatalf("promote: %+v %v", o, err)
			}
			if got := f.isPromoted(res.Record.ID); got != (tt.want == StatusPromoted) {
				t.Fatalf("promoted = %v", got)
			}
			if tt.want == StatusPromoted {
				p, _ := f.st.Promotion(f.ctx, res.Record.ID)
				if p.Evidence.Eval == nil || p.Evidence.Eval.Passed != 6 || p.Evidence.Eval.BasePassed != 5 {
					t.Errorf("eval evidence %+v", p.Evidence.Eval)
				}
			}
			if tt.name == "crash" && !strings.Contains(o.Reason, "eval gate failed") {
				t.Errorf("reason %q", o.Reason)
			}
		})
	}
}

// An agent may demote an earned record when the eval suite shows the record
// regresses it; without a regression the agent only gets a proposal.
func TestAgentDemoteByEvalRegression(t *testing.T) {
	t.Parallel()
	check := schema.EvalConfig{Command: []string{"sh", evalScript(t, "check-prompt.sh"), evalScript(t, "code-review-cases.txt")}}
	f := newFixture(t, func(c *Config) { c.Evaluator = NewCommandEvaluator(check, t.TempDir()) })
	bad := f.write("Skip the tests for docs-only changes", "judgment.code-review.heuristics", "conv-1", true)
	good := f.write("Flag unchecked errors on deferred Close calls", "judgment.code-review.heuristics", "conv-1", true)
	o, err := f.eng.Demote(f.ctx, bad.ID, "it hurts the suite", agentKind)
	if err != nil || o.Status != StatusDemoted || o.Evidence.Eval == nil || !strings.Contains(o.Evidence.Note, "eval regression") {
		t.Fatalf("demote of a regressing record: %+v %v", o, err)
	}
	o, err = f.eng.Demote(f.ctx, good.ID, "I think it is wrong", agentKind)
	if err != nil || o.Status != StatusPending || !f.isPromoted(good.ID) {
		t.Fatalf("demote of a helping record: %+v %v", o, err)
	}
}

// TestEvalCommandIsArgvNoShell: the eval command runs as argv. Arguments
// holding shell metacharacters (`;`, `$(...)`, backquotes, `|`, `>`, `&&`)
// reach the program byte for byte and nothing is interpreted: no file that
// a shell would create appears, in the command's directory or anywhere
// else the test looks. A program name with metacharacters is not found.
func TestEvalCommandIsArgvNoShell(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	argsOut := filepath.Join(t.TempDir(), "args.txt")
	script := filepath.Join(t.TempDir(), "argv.sh")
	body := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> '" + argsOut + "'\necho '{\"score\": 1, \"passed\": 1, \"failed\": 0}'\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	hostile := []string{
		"a; touch pwned-semicolon",
		"$(touch pwned-subst)",
		"`touch pwned-backquote`",
		"x | touch pwned-pipe",
		"> pwned-redirect",
		"y && touch pwned-and",
		"$HOME",
		"*",
	}
	ev := NewCommandEvaluator(schema.EvalConfig{Command: append([]string{"sh", script}, hostile...)}, t.TempDir())
	ev.Dir = dir
	out, err := ev.Evaluate(context.Background(), testAgent(t), testAgent(t))
	if err != nil || !out.Pass {
		t.Fatalf("Evaluate: %+v %v", out, err)
	}
	data, err := os.ReadFile(argsOut)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	// Two runs (base and candidate), each: the hostile args, then the config path.
	if len(lines) != 2*(len(hostile)+1) {
		t.Fatalf("the command got %d argument lines, want %d:\n%s", len(lines), 2*(len(hostile)+1), data)
	}
	for run := range 2 {
		got := lines[run*(len(hostile)+1):][:len(hostile)+1]
		for i, want := range hostile {
			if got[i] != want {
				t.Errorf("run %d argument %d = %q, want %q verbatim", run, i, got[i], want)
			}
		}
		if !strings.HasSuffix(got[len(hostile)], ".json") {
			t.Errorf("run %d: last argument %q is not the config path", run, got[len(hostile)])
		}
	}
	// A metacharacter in the program name is part of the name: not found.
	ev = NewCommandEvaluator(schema.EvalConfig{Command: []string{"true; touch pwned-program"}}, t.TempDir())
	ev.Dir = dir
	out, err = ev.Evaluate(context.Background(), testAgent(t), testAgent(t))
	if err != nil || out.Pass || !strings.Contains(out.Reason, "eval command failed") {
		t.Errorf("program name with metacharacters: %+v %v, want a failed command", out, err)
	}
	for _, d := range []string{dir, filepath.Dir(script), "."} {
		matches, err := filepath.Glob(filepath.Join(d, "pwned-*"))
		if err != nil {
			t.Fatal(err)
		}
		if len(matches) > 0 {
			t.Errorf("a shell interpreted the argv: %v exist", matches)
		}
	}
}
