package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/textkernel"
	"github.com/agent-ls/agent-ls/workspace"
)

// minGardenEvery is the shortest --every: gardening re-runs the evals of
// every earned promotion, and a typo such as --every 1ms would run them
// back to back. minEveryEnv (for tests, not in the help) lowers it.
const minGardenEvery = time.Second

const minEveryEnv = "AGENT_LS_GARDEN_MIN_EVERY"

func runGarden(ctx context.Context, e *env, args []string) int {
	c := newEvoCmd(e, "garden", "[AGENT_FILE] [--every DUR] [flags]",
		"Curate the memory: dedupe near-identical records, report fragmenting entries, conflicts and stale\ncurrentState facts, re-run evals on earned promotions, and print a health report. Gardening only opens\nproposals (as system:garden) and reports findings; it changes nothing a human has not approved.\n\n"+
			"--every DUR gardens on a schedule until interrupted (SIGINT or SIGTERM end it after the current pass,\nexit 0): a line per pass (a JSON line with --format json). On a PostgreSQL store one runner gardens at a\ntime across machines (a store-wide lock); the others say on stderr that they are waiting and skip the pass.", false)
	every := c.fs.Duration("every", 0, "garden every `DUR` (e.g. 10m) until interrupted; at least "+minGardenEvery.String())
	if _, code, ok := c.parse(args, 0); !ok {
		return code
	}
	everySet := false
	c.fs.Visit(func(f *flag.Flag) { everySet = everySet || f.Name == "every" })
	if everySet {
		min := minGardenEvery
		if v := e.getenv(minEveryEnv); v != "" {
			if d, err := time.ParseDuration(v); err == nil {
				min = d
			}
		}
		if *every < min {
			return usageFail(e.stderr, c.name, fmt.Errorf("--every %s: want at least %s", *every, min))
		}
		return c.gardenEvery(ctx, *every)
	}
	reports, code := c.gardenPass(ctx)
	if code != exitOK {
		return code
	}
	if c.format == "json" {
		return c.writeJSON(struct {
			Reports []engine.HealthReport `json:"reports"`
		}{reports})
	}
	c.printReports(reports)
	return exitOK
}

// gardenPass gardens every agent of the base scope once (the store opened
// and closed again).
func (c *evoCmd) gardenPass(ctx context.Context) ([]engine.HealthReport, int) {
	reports := []engine.HealthReport{}
	code := c.eachAgent(ctx, func(_ string, eng *engine.Agent) error {
		h, err := eng.Garden(ctx)
		if err != nil {
			return err
		}
		reports = append(reports, h)
		return nil
	})
	return reports, code
}

// gardenPassLine is the JSON line of one scheduled pass.
type gardenPassLine struct {
	Pass int    `json:"pass"`
	At   string `json:"at"`
	// Gardened is false for a pass skipped because another runner holds
	// the store's garden lock (WaitingFor says who, when known) or one
	// that failed (Error).
	Gardened   bool                  `json:"gardened"`
	WaitingFor string                `json:"waitingFor,omitempty"`
	Error      string                `json:"error,omitempty"`
	Reports    []engine.HealthReport `json:"reports"`
}

// gardenEvery gardens every `every` until ctx ends (SIGINT, SIGTERM): the
// pass under way then finishes and the command exits 0. A failing first
// pass ends the command with its code (the workspace or store is wrong); a
// later failure is reported and the next pass runs. On a store several
// machines share, the runner holds the store's garden lock
// (engine.TryExclusive) from the pass it takes it until it exits; a runner
// that cannot take it says so on stderr and skips the pass.
func (c *evoCmd) gardenEvery(ctx context.Context, every time.Duration) int {
	// A pass is not interrupted: it runs on a context the signals do not
	// end, and the runner stops between passes.
	pe := *c.e
	pe.ctx = context.WithoutCancel(ctx)
	c.e = &pe
	passCtx := pe.ctx
	// The lock lives on a handle of its own, open for the runner's life,
	// on a shared store only: a store file is opened per pass (its file
	// lock serialises the runners) and would otherwise stay locked.
	loc, err := c.gardenLocation()
	if err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	var lock engine.Lock
	var lockErr error
	var takeLock func() (ok bool, holder string)
	if engine.IsURL(loc) {
		lst, _, err := openStore(c.e, c.store, false)
		if err != nil {
			return c.fail(err)
		}
		defer func() {
			if lock != nil {
				lock.Release()
			}
			lst.Close()
		}()
		take := func() (ok bool, holder string) {
			if lock != nil && !lock.Held(passCtx) {
				lock.Release()
				lock = nil
				c.errorf("lost the garden lock of %s (its session ended)", engine.Redact(loc))
			}
			if lock != nil {
				return true, ""
			}
			l, holder, err := engine.TryExclusive(passCtx, lst, engine.GardenLock)
			if err != nil {
				lockErr = err
				return false, ""
			}
			if l == nil {
				if holder == "" {
					holder = "another runner"
				}
				c.errorf("waiting: %s holds the garden lock of %s; skipping this pass", holder, engine.Redact(loc))
				return false, holder
			}
			lock = l
			host, _ := os.Hostname()
			c.errorf("took the garden lock of %s (%s pid %d)", engine.Redact(loc), host, os.Getpid())
			return true, ""
		}
		takeLock = take
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for n := 1; ; n++ {
		line := gardenPassLine{Pass: n, At: schema.FormatTime(c.e.now()), Reports: []engine.HealthReport{}}
		ok := true
		if takeLock != nil {
			lockErr = nil
			ok, line.WaitingFor = takeLock()
			if lockErr != nil {
				line.Error = lockErr.Error()
				c.errorf("pass %d: garden lock: %v", n, lockErr)
			}
		}
		if ok {
			// Every pass starts afresh: the workspace and the store are
			// read again.
			c.st, c.missing, c.tx = nil, false, nil
			reports, code := c.gardenPass(passCtx)
			if code != exitOK {
				if n == 1 {
					return code
				}
				line.Error = fmt.Sprintf("pass failed (exit %d)", code)
			} else {
				line.Gardened, line.Reports = true, reports
			}
		}
		if code := c.printPass(line); code != exitOK {
			return code
		}
		select {
		case <-ctx.Done():
			return exitOK
		case <-tick.C:
		}
		if ctx.Err() != nil {
			return exitOK
		}
	}
}

// gardenLocation is the store the command gardens (as eachAgent opens it).
func (c *evoCmd) gardenLocation() (string, error) {
	start := c.e.cwd
	if c.agentFile != "" {
		start = resolve(c.e.cwd, c.agentFile)
	}
	ws, err := workspace.Find(start)
	if err != nil {
		return "", err
	}
	if c.store.path == "" && c.agentFile != "" {
		c.store.path = ws.StorePath
	}
	loc, err := locateStore(c.e, c.store)
	if err != nil {
		return "", err
	}
	return loc.Path, nil
}

// printPass prints one scheduled pass: a JSON line, or a line of text.
func (c *evoCmd) printPass(l gardenPassLine) int {
	if c.format == "json" {
		data, err := json.Marshal(l)
		if err != nil {
			c.errorf("write output: %v", err)
			return exitUsage
		}
		if _, err := fmt.Fprintf(c.e.stdout, "%s\n", data); err != nil {
			return exitUsage
		}
		return exitOK
	}
	var what string
	switch {
	case l.Error != "":
		what = "failed: " + l.Error
	case !l.Gardened:
		what = "skipped: " + l.WaitingFor + " holds the garden lock"
	default:
		findings, proposals, evals := 0, 0, 0
		for _, h := range l.Reports {
			findings += len(h.Findings)
			proposals += len(h.Proposals)
			evals += h.Count(engine.FindingEvalRegression)
		}
		what = fmt.Sprintf("%s, %s (%d eval regressions), %s opened", schema.Count(len(l.Reports), "agent"),
			schema.Count(findings, "finding"), evals, schema.Count(proposals, "proposal"))
	}
	if _, err := fmt.Fprintf(c.e.stdout, "pass %d %s: %s\n", l.Pass, l.At, what); err != nil {
		return exitUsage
	}
	return exitOK
}

// printReports prints the health reports of one pass as text.
func (c *evoCmd) printReports(reports []engine.HealthReport) {
	e := c.e
	for i, h := range reports {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		agent := h.Agent
		if agent == "" {
			agent = "(shared records)"
		}
		fmt.Fprintf(e.stdout, "agent %s: %d promoted, %s, %s, composition %d/%d chars (%d learned)\n",
			agent, h.Promoted, schema.Count(len(h.Candidates), "candidate"), schema.Count(h.PendingReviews, "pending review"), h.ComposedChars, h.Ceiling, h.ComposedChars-h.AuthoredChars)
		for _, p := range []string{"background", "judgment", "example", "awareness", "recovery", "manual"} {
			ph := h.Primitives[p]
			if ph.Promoted > 0 {
				fmt.Fprintf(e.stdout, "  %-10s %3d promoted  %5d/%d chars\n", p, ph.Promoted, ph.Chars, ph.Budget)
			}
		}
		for _, cp := range h.Candidates {
			prog := ""
			if cp.Need > 0 {
				prog = " " + schema.ConversationsOf(cp.Have, cp.Need)
			}
			if cp.Pending != "" {
				prog += " pending proposal " + cp.Pending
			}
			fmt.Fprintf(e.stdout, "  candidate %s %s (%s)%s: %s\n", cp.ID, cp.Target, cp.Tier, prog, textkernel.Clip(cp.Content, 80))
		}
		fmt.Fprintf(e.stdout, "  recall: %d candidates (%d never corroborated, %d unused), %d untargeted\n",
			h.Recall.Candidates, h.Recall.NeverCorroborated, h.Recall.Unused, h.Recall.Untargeted)
		for _, f := range h.Findings {
			line := fmt.Sprintf("  %s: %s", f.Kind, f.Message)
			if f.ProposalID != "" {
				line += " [proposal " + f.ProposalID + "]"
			}
			fmt.Fprintln(e.stdout, line)
			// The composition diff the proposal would make, indented.
			if f.ProposalID != "" && f.Diff == "" {
				fmt.Fprintln(e.stdout, "      (approving it changes no rendered line)")
			}
			for _, l := range strings.Split(strings.TrimRight(f.Diff, "\n"), "\n") {
				if l != "" {
					fmt.Fprintln(e.stdout, "      "+l)
				}
			}
		}
	}
}
