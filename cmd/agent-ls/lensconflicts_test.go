package main

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// conflictKeys are the conflicts a surface lists, each as "kind a b" with
// its two sides sorted (a record id, or an authored line's JSON pointer),
// sorted: what the surfaces must agree on.
type conflictKeys []string

func conflictKey(kind string, sides ...string) string {
	s := slices.Clone(sides)
	slices.Sort(s)
	return kind + " " + strings.Join(s, " ")
}

func sorted(ks []string) conflictKeys {
	ks = slices.Clone(ks)
	slices.Sort(ks)
	return ks
}

var lensConflictRE = regexp.MustCompile(`<article class="conflict card" data-kind="([^"]*)" data-record="([^"]*)" data-other="([^"]*)"`)

// lensConflicts lists the conflicts panel of the lens's landing page,
// served by the real handler over the workspace's store.
func lensConflicts(t *testing.T, w *evoWorkspace) conflictKeys {
	t.Helper()
	ts, c, _ := lensOver(t, w.dir, storeFlags{lockTimeout: 5 * time.Second})
	code, body := get(t, c, ts.URL+"/")
	if code != http.StatusOK {
		t.Fatalf("landing %d: %s", code, body)
	}
	i := strings.Index(body, `<section id="conflicts">`)
	if i < 0 {
		t.Fatalf("landing without a conflicts panel")
	}
	body = body[i:]
	body = body[:strings.Index(body, "</section>")]
	var out []string
	for _, m := range lensConflictRE.FindAllStringSubmatch(body, -1) {
		out = append(out, conflictKey(m[1], m[2], strings.ReplaceAll(m[3], "&#43;", "+")))
	}
	return sorted(out)
}

// lintConflicts lists the conflict findings of `agent-ls lint` on the
// deploy agent.
func lintConflicts(t *testing.T, w *evoWorkspace) conflictKeys {
	t.Helper()
	var fs []struct {
		Rule    string
		Pointer string
		Related []struct{ RecordID string }
	}
	w.cliJSON(&fs, "lint", "deploy.agent.yaml")
	var out []string
	for _, f := range fs {
		kind := map[string]string{"memory-conflict": "key-collision", "contradiction": "contradiction", "authored-wins": "authored-wins"}[f.Rule]
		if kind == "" {
			continue
		}
		var sides []string
		for _, r := range f.Related {
			sides = append(sides, r.RecordID)
		}
		if len(sides) == 1 {
			sides = append(sides, f.Pointer)
		}
		out = append(out, conflictKey(kind, sides...))
	}
	return sorted(out)
}

// conflictJSON is one conflict as the engine encodes it.
type conflictJSON struct {
	Kind, RecordID, With, Authored string
}

func (c conflictJSON) key() string {
	return conflictKey(c.Kind, c.RecordID, c.With+c.Authored)
}

// lintReportConflicts lists the conflicts of `agent-ls lint --report`.
func lintReportConflicts(t *testing.T, w *evoWorkspace) conflictKeys {
	t.Helper()
	var rep struct {
		Reports []struct {
			Agent  string
			Health struct {
				Conflicts       int
				ConflictRecords []conflictJSON `json:"conflictRecords"`
			}
		}
	}
	w.cliJSON(&rep, "lint", "--report", "deploy.agent.yaml")
	var out []string
	for _, r := range rep.Reports {
		if r.Health.Conflicts != len(r.Health.ConflictRecords) {
			t.Errorf("lint --report counts %d conflicts and lists %d", r.Health.Conflicts, len(r.Health.ConflictRecords))
		}
		for _, c := range r.Health.ConflictRecords {
			out = append(out, c.key())
		}
	}
	return sorted(out)
}

// gardenConflicts lists the conflicts of the deploy agent's garden report.
func gardenConflicts(t *testing.T, w *evoWorkspace) conflictKeys {
	t.Helper()
	var g struct {
		Reports []struct {
			Agent     string
			Conflicts []conflictJSON
		}
	}
	w.cliJSON(&g, "garden", "--actor", "human:ana")
	var out []string
	for _, r := range g.Reports {
		if r.Agent != "deploy-ops" {
			continue
		}
		for _, c := range r.Conflicts {
			out = append(out, c.key())
		}
	}
	return sorted(out)
}

// overlayCollisions lists the slot collisions of `overlay --report`.
func overlayCollisions(t *testing.T, w *evoWorkspace) conflictKeys {
	t.Helper()
	var rep struct {
		Report struct {
			Conflicts []struct{ Slot, Winner, Shadowed string }
		}
	}
	w.cliJSON(&rep, "overlay", "deploy.agent.yaml", "--report")
	var out []string
	for _, c := range rep.Report.Conflicts {
		out = append(out, conflictKey("key-collision", c.Winner, c.Shadowed))
	}
	return sorted(out)
}

// saveAs saves one memory of deploy-ops as actor, in the scope of the
// actor's user (user=NAME: each user's save sees only its own records, so
// two users' values of one key both stay, a residual collision for the
// workspace scope), and returns its id.
func (w *evoWorkspace) saveAs(t *testing.T, actor, target, conv, content string) string {
	t.Helper()
	var out struct {
		Record struct{ ID string } `json:"record"`
	}
	user := actor[strings.Index(actor, ":")+1:]
	r := w.cliJSON(&out, "memory", "save", "--scope", "project=atlas,agent=deploy-ops,user="+user, "--actor", actor,
		"--target", target, "--conversation", conv, "--content", content)
	wantCode(t, r, exitOK, "save "+content)
	return out.Record.ID
}

// TestLensListsResidualCollision is reproduction 7 of issue 30: two users
// save one background key with different content (both promote, humans'
// saves): overlay --report lists the collision, and so must the lens's
// conflicts panel, lint, lint --report and garden.
func TestLensListsResidualCollision(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	a := w.saveAs(t, "human:ana", "background.projectContext.region", "a1", "eu-west-1, with failover to eu-central-1")
	b := w.saveAs(t, "human:bo", "background.projectContext.region", "b1", "us-east-2 since the migration")
	want := conflictKeys{conflictKey("key-collision", a, b)}
	if got := overlayCollisions(t, w); !slices.Equal(got, want) {
		t.Fatalf("overlay --report: %v, want %v", got, want)
	}
	if got := lensConflicts(t, w); !slices.Equal(got, want) {
		t.Errorf("lens conflicts panel: %v, want %v", got, want)
	}
	if got := lintConflicts(t, w); !slices.Equal(got, want) {
		t.Errorf("lint: %v, want %v", got, want)
	}
	if got := lintReportConflicts(t, w); !slices.Equal(got, want) {
		t.Errorf("lint --report: %v, want %v", got, want)
	}
	if got := gardenConflicts(t, w); !slices.Equal(got, want) {
		t.Errorf("garden: %v, want %v", got, want)
	}
}

// TestConflictSurfacesAgree: a workspace holding a conflict of each kind (a
// residual key collision, an authored-wins drop, a contradiction between a
// candidate and a promoted heuristic): the lens's panel, lint, lint
// --report and garden list the same three.
func TestConflictSurfacesAgree(t *testing.T) {
	t.Parallel()
	w := newEvoWorkspace(t, "")
	a := w.saveAs(t, "human:ana", "background.projectContext.region", "a1", "eu-west-1, with failover to eu-central-1")
	b := w.saveAs(t, "human:bo", "background.projectContext.region", "b1", "us-east-2 since the migration")
	pipe := w.saveAs(t, "human:ana", "background.projectContext.pipeline", "a2", "GitHub Actions, no canary")
	prom := w.saveAs(t, "human:ana", "judgment.deploy.heuristics", "a3", "Always deploy on Fridays after the freeze")
	wantCode(t, w.cli("promote", prom, "--actor", "human:ana"), exitOK, "promote")
	cand := w.saveAs(t, "agent:deploy-ops", "judgment.deploy.heuristics", "c3", "Never deploy on Fridays after the freeze")
	want := sorted([]string{
		conflictKey("key-collision", a, b),
		conflictKey("authored-wins", pipe, "/background/projectContext/pipeline"),
		conflictKey("contradiction", cand, prom),
	})
	if got := lensConflicts(t, w); !slices.Equal(got, want) {
		t.Errorf("lens conflicts panel:\n%v\nwant\n%v", got, want)
	}
	if got := lintConflicts(t, w); !slices.Equal(got, want) {
		t.Errorf("lint:\n%v\nwant\n%v", got, want)
	}
	if got := lintReportConflicts(t, w); !slices.Equal(got, want) {
		t.Errorf("lint --report:\n%v\nwant\n%v", got, want)
	}
	if got := gardenConflicts(t, w); !slices.Equal(got, want) {
		t.Errorf("garden:\n%v\nwant\n%v", got, want)
	}
}
