package lint

import (
	"strings"
	"sync"

	"github.com/agent-ls/agent-ls/evolve/contradiction"
	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/schema"
)

// Memo keeps, between runs over the same store facts, the parts of the
// conflict list that an edit of the agent file cannot change: the
// contradictions among live records, and each judgment domain's
// contradictions with its authored lines while those lines are unchanged.
// It also keeps the overlay report of the last agent config, for the next
// run over that same config.
// A host that lints one file on every keystroke (the language server)
// keeps one Memo per StoreFacts value and passes it in Input.Memo; it must
// never be shared between different facts. It is safe for concurrent use.
type Memo struct {
	mu sync.Mutex
	// records is the contradictions among live records (nil: not computed).
	records []liveConflict
	done    bool
	// authored is, per judgment domain, its authored lines' signature and
	// the contradictions of the domain's live records with them.
	authored map[string]authoredMemo
	// dups is the near-duplicate groups of live records (dupsDone: computed).
	dups     []dupGroup
	dupsDone bool
	// report is the overlay report of the agent config last linted
	// (reportOf, under reportPolicy): a function of the config, the facts
	// and the policy, and the config is never changed once decoded.
	reportOf     *schema.AgentConfig
	reportPolicy overlay.Policy
	report       overlay.Report
}

type authoredMemo struct {
	sig string
	out []liveConflict
}

// liveConflict is a conflict found for the live record at index i
// (promoted records first, then candidates), so runs that reuse parts
// list them in one order.
type liveConflict struct {
	i  int
	cf Conflict
}

// authoredSignature identifies a domain's authored lines: their pointers
// and texts.
func authoredSignature(lines []contradiction.AuthoredLine) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.Pointer)
		b.WriteByte(0)
		b.WriteString(l.Text)
		b.WriteByte(0)
	}
	return b.String()
}

func (m *Memo) getRecords() ([]liveConflict, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.records, m.done
}

func (m *Memo) setRecords(out []liveConflict) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records, m.done = out, true
}

func (m *Memo) getAuthored(domain, sig string) ([]liveConflict, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.authored[domain]
	if !ok || a.sig != sig {
		return nil, false
	}
	return a.out, true
}

// setAuthored keeps the domain's latest signature only: an edit replaces
// what the text before it found.
func (m *Memo) setAuthored(domain, sig string, out []liveConflict) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.authored == nil {
		m.authored = map[string]authoredMemo{}
	}
	m.authored[domain] = authoredMemo{sig: sig, out: out}
}

// getReport is the report kept for cfg under the same policy. Configs
// compare by identity: the language server's parse cache hands back the
// config it decoded before for a text whose value is unchanged
// (schema.ParseCache), and comparing values would cost a good part of what
// the report saves.
func (m *Memo) getReport(cfg *schema.AgentConfig, p overlay.Policy) (overlay.Report, bool) {
	if m == nil || cfg == nil {
		return overlay.Report{}, false
	}
	m.mu.Lock()
	of, policy, rep := m.reportOf, m.reportPolicy, m.report
	m.mu.Unlock()
	if of != cfg || policy != p {
		return overlay.Report{}, false
	}
	return rep, true
}

// setReport keeps the report of the latest config only. The report is
// shared between runs: it is never changed after Apply returns it.
func (m *Memo) setReport(cfg *schema.AgentConfig, p overlay.Policy, rep overlay.Report) {
	if m == nil || cfg == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reportOf, m.reportPolicy, m.report = cfg, p, rep
}

func (m *Memo) getDupGroups() ([]dupGroup, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dups, m.dupsDone
}

func (m *Memo) setDupGroups(g []dupGroup) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dups, m.dupsDone = g, true
}
