package evolve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/textkernel"
)

// Evaluator runs an eval suite on a base config and a candidate config′ and
// says whether the candidate may promote.
type Evaluator interface {
	Evaluate(ctx context.Context, base, candidate *schema.AgentConfig) (EvalOutcome, error)
}

// EvalOutcome is an eval gate's verdict. A suite that could not run
// (timeout, crash, unparseable output) has Pass=false, Regressed=false and
// the cause in Reason; it never promotes and never demotes.
type EvalOutcome struct {
	// Pass: the candidate meets the requirement (non-regression or
	// improvement).
	Pass bool `json:"pass"`
	// Regressed: both suites ran and the candidate scored worse.
	Regressed bool              `json:"regressed"`
	Reason    string            `json:"reason"`
	Result    *store.EvalResult `json:"result,omitempty"`
}

// SuiteResult is what an eval command prints on stdout.
type SuiteResult struct {
	Score  *float64 `json:"score"`
	Passed int      `json:"passed"`
	Failed int      `json:"failed"`
}

// MaxEvalOutput bounds what an eval command may print on stdout.
const MaxEvalOutput = 1 << 20

// CommandEvaluator runs a configured command (argv, no shell) once per
// config, with the path of a temp file holding that config as JSON as its
// last argument, and reads a JSON SuiteResult from its stdout. When Render
// is set, the rendered system prompt is written next to the config and its
// path passed in the environment as AGENT_LS_PROMPT_FILE.
type CommandEvaluator struct {
	Command []string
	Timeout time.Duration
	// Require is "non-regression" (default) or "improvement".
	Require string
	// TmpDir holds the config files (os.TempDir() when empty).
	TmpDir string
	// Dir is the command's working directory (the workspace root).
	Dir string
	// Render renders a config as the system prompt (overlay.Render by default).
	Render func(*schema.AgentConfig) string
}

// NewCommandEvaluator returns the evaluator of an eval config.
func NewCommandEvaluator(cfg schema.EvalConfig, tmpDir string) *CommandEvaluator {
	timeout := schema.DefaultEvalTimeout
	if cfg.Timeout != "" {
		if d, err := schema.ParseDuration(cfg.Timeout); err == nil && d > 0 {
			timeout = d
		}
	}
	req := cfg.Require
	if req == "" {
		req = "non-regression"
	}
	return &CommandEvaluator{
		Command: cfg.Command, Timeout: timeout, Require: req, TmpDir: tmpDir,
		Render: func(c *schema.AgentConfig) string { return overlay.Render(c, overlay.Attribution{}).Text() },
	}
}

// Evaluate runs the suite on base, then on candidate, and compares.
func (c *CommandEvaluator) Evaluate(ctx context.Context, base, candidate *schema.AgentConfig) (EvalOutcome, error) {
	if len(c.Command) == 0 {
		return EvalOutcome{Reason: "no eval command configured (eval.command in .agent-ls.yaml)"}, nil
	}
	dir, err := os.MkdirTemp(c.TmpDir, "agent-ls-eval-")
	if err != nil {
		return EvalOutcome{}, fmt.Errorf("eval temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	b, why, err := c.runOne(ctx, dir, "config", base)
	if err != nil || why != "" {
		return EvalOutcome{Reason: "base config: " + why}, err
	}
	k, why, err := c.runOne(ctx, dir, "candidate", candidate)
	if err != nil || why != "" {
		return EvalOutcome{Reason: "candidate config: " + why}, err
	}
	return Compare(b, k, c.Require), nil
}

// RunSuite runs the suite once on cfg, as Evaluate runs it on each of its
// two configs (same argv, config file, AGENT_LS_PROMPT_FILE, timeout and
// output contract). A suite that cannot run (no command, timeout, crash,
// unusable output) returns why in reason; err is reserved for the host.
func (c *CommandEvaluator) RunSuite(ctx context.Context, cfg *schema.AgentConfig) (res SuiteResult, reason string, err error) {
	if len(c.Command) == 0 {
		return SuiteResult{}, "no eval command configured (eval.command in .agent-ls.yaml)", nil
	}
	dir, err := os.MkdirTemp(c.TmpDir, "agent-ls-eval-")
	if err != nil {
		return SuiteResult{}, "", fmt.Errorf("eval temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	return c.runOne(ctx, dir, "config", cfg)
}

// Compare applies the requirement to two suite results: non-regression
// (score and passed count not lower) or improvement (non-regression and a
// higher score or passed count).
func Compare(base, cand SuiteResult, require string) EvalOutcome {
	const eps = 1e-9
	bs, cs := *base.Score, *cand.Score
	res := &store.EvalResult{BaseScore: bs, CandidateScore: cs, BasePassed: base.Passed, BaseFailed: base.Failed,
		Passed: cand.Passed, Failed: cand.Failed, Require: require}
	desc := fmt.Sprintf("score %g → %g, passed %d/%d → %d/%d", bs, cs,
		base.Passed, base.Passed+base.Failed, cand.Passed, cand.Passed+cand.Failed)
	if cs < bs-eps || cand.Passed < base.Passed {
		return EvalOutcome{Regressed: true, Reason: "regression: " + desc, Result: res}
	}
	if require == "improvement" && !(cs > bs+eps || cand.Passed > base.Passed) {
		return EvalOutcome{Reason: "no improvement (required): " + desc, Result: res}
	}
	return EvalOutcome{Pass: true, Reason: desc, Result: res}
}

// runOne writes cfg and runs the command on it. A suite that cannot run
// returns a reason; err is reserved for the host (temp files, cancellation).
func (c *CommandEvaluator) runOne(ctx context.Context, dir, name string, cfg *schema.AgentConfig) (SuiteResult, string, error) {
	data, err := marshalConfig(cfg)
	if err != nil {
		return SuiteResult{}, "", fmt.Errorf("encode %s: %w", name, err)
	}
	path := filepath.Join(dir, name+".json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return SuiteResult{}, "", fmt.Errorf("write %s: %w", path, err)
	}
	env := os.Environ()
	if c.Render != nil {
		pp := filepath.Join(dir, name+".prompt.txt")
		if err := os.WriteFile(pp, []byte(c.Render(cfg)), 0o600); err != nil {
			return SuiteResult{}, "", fmt.Errorf("write %s: %w", pp, err)
		}
		env = append(env, "AGENT_LS_PROMPT_FILE="+pp)
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = schema.DefaultEvalTimeout
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	argv := append(append([]string{}, c.Command[1:]...), path)
	cmd := exec.CommandContext(rctx, c.Command[0], argv...)
	cmd.Dir = c.Dir
	cmd.Env = env
	stdout := &capped{max: MaxEvalOutput}
	stderr := &capped{max: 4096}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	setProcessGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return SuiteResult{}, "", fmt.Errorf("eval %s: %w", strings.Join(c.Command, " "), ctx.Err())
	}
	if errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return SuiteResult{}, fmt.Sprintf("eval command timed out after %s", timeout), nil
	}
	if runErr != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			msg = ": " + lastLine(msg)
		}
		return SuiteResult{}, fmt.Sprintf("eval command failed (%v)%s", runErr, msg), nil
	}
	if stdout.over {
		return SuiteResult{}, fmt.Sprintf("eval output exceeds %d bytes", MaxEvalOutput), nil
	}
	r, why := ParseSuiteResult(stdout.Bytes())
	return r, why, nil
}

// ParseSuiteResult parses `{"score": 0.93, "passed": 41, "failed": 1}`
// (the last non-empty line of the output) and returns a reason when it is
// unusable: not JSON, no numeric score, a non-finite score, negative counts.
func ParseSuiteResult(out []byte) (SuiteResult, string) {
	text := strings.TrimSpace(string(out))
	if text == "" {
		return SuiteResult{}, "eval output is empty: want {\"score\": N, \"passed\": N, \"failed\": N}"
	}
	line := lastLine(text)
	var r SuiteResult
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		return SuiteResult{}, fmt.Sprintf("eval output is not the JSON result %q: %v", textkernel.Clip(line, 80), err)
	}
	switch {
	case r.Score == nil:
		return SuiteResult{}, fmt.Sprintf("eval output %q has no \"score\"", textkernel.Clip(line, 80))
	case math.IsNaN(*r.Score) || math.IsInf(*r.Score, 0):
		return SuiteResult{}, "eval score is not a finite number"
	case r.Passed < 0 || r.Failed < 0:
		return SuiteResult{}, "eval passed/failed counts are negative"
	}
	return r, ""
}

func marshalConfig(cfg *schema.AgentConfig) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(cfg); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}

// capped is a writer keeping at most max bytes and noting overflow. It does
// not embed bytes.Buffer: io.Copy would use Buffer.ReadFrom and bypass the cap.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room < len(p) {
		c.over = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) Bytes() []byte  { return c.buf.Bytes() }
func (c *capped) String() string { return c.buf.String() }

// evaluate compares the composition without rec and with it (both on top of
// the other promoted records of this view).
func (e *Engine) evaluate(ctx context.Context, rec schema.MemoryRecord) (EvalOutcome, error) {
	prom, err := e.promoted(ctx)
	if err != nil {
		return EvalOutcome{}, err
	}
	var others []schema.MemoryRecord
	for _, p := range prom {
		if p.ID != rec.ID {
			others = append(others, p)
		}
	}
	base, _ := overlay.Apply(e.agent, others, e.policy)
	cand, _ := overlay.Apply(e.agent, append(others, rec), e.policy)
	out, err := e.eval.Evaluate(ctx, base, cand)
	if err != nil {
		return out, fmt.Errorf("eval gate for %s: %w", rec.ID, err)
	}
	return out, nil
}
