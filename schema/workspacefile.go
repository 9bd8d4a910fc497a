package schema

import (
	"fmt"
	"strings"
)

// ParseWorkspaceConfig parses and checks a workspace config (.agent-ls.yaml)
// as written, without defaults (see WorkspaceConfig.WithDefaults). Malformed
// YAML gives a *ParseError; unknown keys, wrong types, bad durations and a
// (hard rules downgraded) are Problems at their positions.
// An empty file is a valid config with every key unset.
func ParseWorkspaceConfig(filename string, data []byte) (WorkspaceConfig, []Problem, error) {
	_, cfg, ps, err := LoadWorkspace(filename, data)
	return cfg, ps, err
}

// LoadWorkspace is ParseWorkspaceConfig that also returns the parsed
// document (nil when the text does not parse), for editors: positions,
// hover and completion over the config as written.
func LoadWorkspace(filename string, data []byte, opts ...ParseOption) (*Document, WorkspaceConfig, []Problem, error) {
	var cfg WorkspaceConfig
	d, err := ParseDocument(filename, data, opts...)
	if err != nil {
		return nil, cfg, nil, err
	}
	if d.Value() == nil {
		return d, cfg, nil, nil
	}
	ps := validateWith(d, workspaceSchema())
	// The config says whose store is read and as whom: a key hidden after
	// a line break the editor does not show is an error, so the config is
	// refused (fail closed), not a warning as in an agent file.
	for _, p := range lineBreakProblems(d) {
		p.Severity = SeverityError
		ps = append(ps, p)
	}
	// Unknown keys are already problems; decode the rest to check values.
	if err := decodeLoose(d.Value(), &cfg); err != nil {
		if len(ps) == 0 {
			ps = append(ps, Problem{Rule: RuleSchema, Severity: SeverityError, Message: err.Error(), Range: d.rootRange()})
		}
		return d, WorkspaceConfig{}, ps, nil
	}
	bad := map[string]bool{}
	for _, p := range ps {
		bad[p.Pointer] = true
	}
	errAt := func(ptr, msg string) {
		ps = append(ps, Problem{Rule: RuleSchema, Severity: SeverityError, Message: msg, Pointer: ptr, Range: valueRange(d, ptr)})
	}
	for _, f := range []struct{ ptr, val string }{
		{"/promotion/proposalExpiry", cfg.Promotion.ProposalExpiry},
		{"/staleAfter", cfg.StaleAfter},
		{"/eval/timeout", evalTimeout(cfg.Eval)},
	} {
		if f.val == "" || bad[f.ptr] {
			continue
		}
		if d, err := ParseDuration(f.val); err != nil {
			errAt(f.ptr, "must be a duration such as 72h, 30m, 7d or 2w")
		} else if d <= 0 {
			errAt(f.ptr, "must be a positive duration such as 72h, 30m, 7d or 2w")
		}
	}
	if cfg.StorePoll != "" && !bad["/storePoll"] {
		if _, err := ParseStorePoll(cfg.StorePoll); err != nil {
			errAt("/storePoll", err.Error())
		}
	}
	if _, ok := cfg.Scope["agent"]; ok && !bad["/scope/agent"] {
		ps = append(ps, Problem{Rule: RuleSchema, Severity: SeverityError, Pointer: "/scope/agent", Range: keyRange(d, "/scope/agent"),
			Message: `scope key "agent" is reserved: it comes from each agent's roleTemplate.name`})
	}
	for id, sev := range cfg.Lint.Rules {
		ptr := "/lint/rules/" + id
		if !KnownLintRule(id) && !bad[ptr] {
			msg := "unknown lint rule " + quoteKey(id)
			if best, ok := nearestRule(id); ok {
				msg += fmt.Sprintf(" (did you mean %q?)", best)
			}
			ps = append(ps, Problem{Rule: RuleSchema, Severity: SeverityError, Pointer: ptr, Range: keyRange(d, ptr),
				Message: msg + "; agent-ls lint --list-rules lists them"})
			continue
		}
		if HardRule(id) && sev != SeverityError && !bad[ptr] {
			how := "turned off"
			if sev != "off" {
				how = "downgraded to " + sev
			}
			errAt(ptr, hardRuleMessage(id, how))
		}
	}
	return d, cfg, sortProblems(ps), nil
}

func evalTimeout(e *EvalConfig) string {
	if e == nil {
		return ""
	}
	return e.Timeout
}

func keyRange(d *Document, ptr string) Range {
	if r, ok := d.KeyRange(ptr); ok {
		return r
	}
	_, r := d.Nearest(ptr)
	return r
}

// nearestRule is the lint rule a misspelt id most likely meant: the nearest
// by NearestName, else the one rule the id is a prefix of (near-dup).
func nearestRule(id string) (string, bool) {
	if best, ok := NearestName(id, LintRuleIDs()); ok {
		return best, true
	}
	best, n := "", 0
	for _, r := range LintRuleIDs() {
		if len(id) >= 3 && strings.HasPrefix(r, strings.ToLower(id)) {
			best, n = r, n+1
		}
	}
	return best, n == 1
}
