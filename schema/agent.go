package schema

import "github.com/agent-ls/agent-ls/textkernel"

// AgentConfig is an authored agent file: the reference framework's
// AgentConfig in its camelCase JSON shape.
type AgentConfig struct {
	// Schema is the optional "$schema" URI editors use; it is not rendered.
	Schema       string            `json:"$schema,omitempty"`
	RoleTemplate RoleTemplate      `json:"roleTemplate"`
	Mission      Mission           `json:"mission"`
	Background   Background        `json:"background"`
	Awareness    Awareness         `json:"awareness"`
	Model        *string           `json:"model,omitempty"`
	Capabilities []string          `json:"capabilities,omitempty"`
	Manuals      map[string]Manual `json:"manuals,omitempty"`
}

// RoleTemplate is who the agent is and how it decides.
type RoleTemplate struct {
	Name             string           `json:"name"`
	Persona          Persona          `json:"persona"`
	Judgments        []Judgment       `json:"judgments,omitempty"`
	Responsibilities []Responsibility `json:"responsibilities,omitempty"`
	Tone             *Tone            `json:"tone,omitempty"`
	Methodology      *Methodology     `json:"methodology,omitempty"`
	Recovery         *Recovery        `json:"recovery,omitempty"`
	DefaultModel     string           `json:"defaultModel,omitempty"`
	Source           string           `json:"source,omitempty"`
	Archetype        *string          `json:"archetype,omitempty"`
}

// Persona is the agent's identity: locked, never changed by memory.
type Persona struct {
	Identity   string   `json:"identity"`
	Tone       string   `json:"tone"`
	Priorities []string `json:"priorities,omitempty"`
	Principles []string `json:"principles,omitempty"`
}

// Judgment is one decision domain with its rules and few-shot examples.
type Judgment struct {
	Domain             string    `json:"domain"`
	Heuristics         []string  `json:"heuristics,omitempty"`
	Constraints        []string  `json:"constraints,omitempty"`
	EscalationTriggers []string  `json:"escalationTriggers,omitempty"`
	Examples           []Example `json:"examples,omitempty"`
}

// Example is a few-shot scenario with a good (and optionally bad) response.
type Example struct {
	Scenario  string `json:"scenario"`
	Good      string `json:"good"`
	Bad       string `json:"bad,omitempty"`
	Reasoning string `json:"reasoning,omitempty"`
}

// Responsibility is a named duty of the role.
type Responsibility struct {
	Key         string   `json:"key"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Examples    []string `json:"examples,omitempty"`
}

// Tone is a named voice; Examples are [label, text] pairs. AntiPatterns keeps
// the framework's snake_case key.
type Tone struct {
	Name         string      `json:"name"`
	Prompt       string      `json:"prompt"`
	Examples     [][2]string `json:"examples,omitempty"`
	AntiPatterns []string    `json:"anti_patterns,omitempty"`
}

// Methodology is the agent's working method.
type Methodology struct {
	Name      string   `json:"name"`
	Prompt    string   `json:"prompt"`
	Checklist []string `json:"checklist,omitempty"`
}

// Recovery says what the agent does when it fails.
type Recovery struct {
	Name        string `json:"name"`
	Prompt      string `json:"prompt"`
	MaxAttempts int    `json:"maxAttempts,omitempty"`
}

// Mission is what the agent is for in this instance.
type Mission struct {
	Objective       string   `json:"objective"`
	SuccessCriteria []string `json:"successCriteria,omitempty"`
	Constraints     []string `json:"constraints,omitempty"`
	Rationale       string   `json:"rationale,omitempty"`
	OutputSchema    any      `json:"outputSchema,omitempty"`
	StrictOutput    bool     `json:"strictOutput,omitempty"`
}

// Background holds the agent's settled facts, one ordered map per section.
type Background struct {
	TeamContext    Entries `json:"teamContext,omitempty"`
	ProjectContext Entries `json:"projectContext,omitempty"`
	Conventions    Entries `json:"conventions,omitempty"`
	CurrentState   Entries `json:"currentState,omitempty"`
}

// Section returns a pointer to the named background section, or nil for an
// unknown name.
func (b *Background) Section(name string) *Entries {
	switch name {
	case SectionTeamContext:
		return &b.TeamContext
	case SectionProjectContext:
		return &b.ProjectContext
	case SectionConventions:
		return &b.Conventions
	case SectionCurrentState:
		return &b.CurrentState
	}
	return nil
}

// Background section names, in render order.
const (
	SectionTeamContext    = "teamContext"
	SectionProjectContext = "projectContext"
	SectionConventions    = "conventions"
	SectionCurrentState   = "currentState"
)

// BackgroundSections lists the background sections in render order.
var BackgroundSections = []string{SectionTeamContext, SectionProjectContext, SectionConventions, SectionCurrentState}

// Awareness is what the agent can know: its information sources.
type Awareness struct {
	Domains                 []AwarenessDomain `json:"domains,omitempty"`
	ExplorationCapabilities []string          `json:"explorationCapabilities,omitempty"`
}

// AwarenessDomain is one information source; it is also the payload of an
// awareness-targeted memory.
type AwarenessDomain struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	AccessMethod string `json:"accessMethod"`
}

// Manual holds a capability's procedures.
type Manual struct {
	Workflows []string `json:"workflows,omitempty"`
}

// JudgmentByDomain returns the index of the judgment with that domain, or
// -1. Domains compare as identifiers do (textkernel.SameKey: case,
// compatibility forms, invisible characters and confusables folded), an
// exact match first, so a memory cannot open a lookalike of an authored
// domain beside it.
func (c *AgentConfig) JudgmentByDomain(domain string) int {
	for i := range c.RoleTemplate.Judgments {
		if c.RoleTemplate.Judgments[i].Domain == domain {
			return i
		}
	}
	for i := range c.RoleTemplate.Judgments {
		if textkernel.SameKey(c.RoleTemplate.Judgments[i].Domain, domain) {
			return i
		}
	}
	return -1
}
