package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

// problemsText formats problems one per line as the .want files do.
func problemsText(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(formatProblem(p))
		b.WriteString(" " + p.Pointer + "\n")
	}
	return b.String()
}

const validHead = "roleTemplate:\n  name: x\n  persona: {identity: y}\nmission: {objective: z}\n"

// TestValidateAgentMessages pins the message formats and ranges of schema
// problems: missing property on the parent's key, unknown property on its own
// key, wrong value on the value.
func TestValidateAgentMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, want string
	}{
		{"valid", validHead, ""},
		{"missing persona", "roleTemplate:\n  name: x\nmission: {objective: z}\n",
			`1:1-1:13: error: missing required property "persona" [schema] /roleTemplate/persona` + "\n"},
		{"missing at root", "roleTemplate:\n  name: x\n  persona: {identity: y}\n",
			`1:1-1:14: error: missing required property "mission" [schema] /mission` + "\n"},
		{"unknown property", validHead + "judgements: []\n",
			`5:1-5:11: error: unknown property "judgements" [schema] /judgements` + "\n"},
		{"unknown nested", "roleTemplate:\n  name: x\n  persona: {identity: y, mood: happy}\nmission: {objective: z}\n",
			`3:26-3:30: error: unknown property "mood" [schema] /roleTemplate/persona/mood` + "\n"},
		{"wrong type", validHead + "capabilities: git\n",
			`5:15-5:18: error: expected array, got string [schema] /capabilities` + "\n"},
		{"wrong type on multi-line collection goes to its key", validHead + "model:\n  a: 1\n  b: 2\n",
			`5:1-5:6: error: expected string or null, got object [schema] /model` + "\n"},
		{"empty string", "roleTemplate:\n  name: \"\"\n  persona: {identity: y}\nmission: {objective: z}\n",
			`2:9-2:11: error: must not be empty [schema] /roleTemplate/name` + "\n"},
		{"enum", validHead + "awareness: {domains: [{name: n, description: d}]}\n",
			`5:23-5:24: error: missing required property "accessMethod" [schema] /awareness/domains/0/accessMethod` + "\n"},
		{"tone pair", "roleTemplate:\n  name: x\n  persona: {identity: y}\n  tone: {name: t, prompt: p, examples: [[a, b, c]]}\nmission: {objective: z}\n",
			`4:48-4:49: error: unexpected item 2: at most 2 items allowed [schema] /roleTemplate/tone/examples/0/2` + "\n"},
		{"null recovery is allowed", "roleTemplate:\n  name: x\n  persona: {identity: y}\n  recovery: null\nmission: {objective: z}\n", ""},
		{"several problems in document order", "roleTemplate:\n  name: 7\n  persona: {}\nmission: {objective: z, extra: 1}\n",
			`2:9-2:10: error: expected string, got number [schema] /roleTemplate/name` + "\n" +
				`3:3-3:10: error: missing required property "identity" [schema] /roleTemplate/persona/identity` + "\n" +
				`4:25-4:30: error: unknown property "extra" [schema] /mission/extra` + "\n"},
		{"duplicate domain", "roleTemplate:\n  name: x\n  persona: {identity: y}\n  judgments: [{domain: a}, {domain: a}]\nmission: {objective: z}\n",
			`4:37-4:38: error: duplicate judgment domain "a" (first on line 4) [schema] /roleTemplate/judgments/1/domain` + "\n"},
		{"json", `{"roleTemplate": {"name": "x", "persona": {"identity": "y"}}, "mission": {"objective": 1}}`,
			`1:88-1:89: error: expected string, got number [schema] /mission/objective` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			name := "a.agent.yaml"
			if strings.HasPrefix(tt.src, "{") {
				name = "a.agent.json"
			}
			d := mustParse(t, name, tt.src)
			if got := problemsText(ValidateAgent(d)); got != tt.want {
				t.Errorf("problems\n got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestLoadAgent(t *testing.T) {
	t.Parallel()
	d, cfg, ps, err := LoadAgent("a.agent.yaml", []byte(validHead+"background:\n  projectContext:\n    zeta: 1\n    alpha: two\n    mid: [x]\n"))
	if err != nil || len(ps) != 0 || cfg == nil || d == nil {
		t.Fatalf("LoadAgent: %v %v %v", cfg, ps, err)
	}
	var keys []string
	for _, e := range cfg.Background.ProjectContext {
		keys = append(keys, e.Key)
	}
	if strings.Join(keys, ",") != "zeta,alpha,mid" {
		t.Errorf("background order %v, want authored order zeta,alpha,mid", keys)
	}
	if _, cfg, ps, err := LoadAgent("a.agent.yaml", []byte("roleTemplate: {}\n")); err != nil || cfg != nil || len(ps) == 0 {
		t.Errorf("invalid agent: cfg %v problems %v err %v; want problems and no config", cfg, ps, err)
	}
	if _, _, _, err := LoadAgent("a.agent.yaml", []byte("a: [\n")); err == nil {
		t.Error("malformed agent: no error")
	}
}

func TestValidateRecordJSON(t *testing.T) {
	t.Parallel()
	base := map[string]any{
		"id": "01JBX0W3A2M9Q8R7S6T5V4W3X2", "scope": map[string]any{"agent": "deploy-ops"}, "kind": "fact",
		"content": "Deploys go out Tuesdays after 14:00 ET", "createdAt": "2026-11-03T14:05:00.000Z", "updatedAt": "2026-11-03T14:05:00.000Z",
	}
	with := func(kv ...any) []byte {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		b, _ := json.Marshal(m)
		return b
	}
	obj := func(kv ...string) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name string
		data []byte
		want string // "" = valid
	}{
		{"untargeted", with(), ""},
		{"background target", with("target", obj("primitive", "background", "section", "projectContext", "key", "deploy_window")), ""},
		{"compact target", with("target", "judgment.code-review.heuristics"), ""},
		{"example with payload", with("target", obj("primitive", "example", "judgmentDomain", "deploy"), "payload", obj("scenario", "s", "good", "g")), ""},
		{"awareness with payload", with("target", "awareness", "payload", obj("name", "n", "description", "d", "accessMethod", "a")), ""},
		{"manual", with("target", obj("primitive", "manual", "capability", "deploy", "section", "workflows")), ""},
		{"bad slot: only the chosen branch's leaf", with("target", obj("primitive", "judgment", "domain", "d", "slot", "rules")),
			`invalid memory record: /target/slot: must be one of "heuristics", "constraints", "escalationTriggers" (got "rules")`},
		{"unknown primitive", with("target", obj("primitive", "skill")),
			`invalid memory record: /target/primitive: must be one of "background", "judgment", "example", "awareness", "recovery", "manual" (got "skill")`},
		{"missing discriminator", with("target", obj("section", "x")),
			`invalid memory record: /target/primitive: missing required property "primitive"`},
		{"field of another branch", with("target", obj("primitive", "recovery", "key", "k")),
			`invalid memory record: /target/key: unknown property "key"`},
		{"manual section", with("target", obj("primitive", "manual", "capability", "c", "section", "steps")),
			`invalid memory record: /target/section: must be "workflows" (got "steps")`},
		{"bad compact target", with("target", "judgment.refunds"),
			`invalid memory record: /target: not a target: want background.SECTION.KEY, judgment.DOMAIN.SLOT, example.DOMAIN, awareness, recovery or manual.CAPABILITY.workflows`},
		{"example payload shape", with("target", "example.deploy", "payload", obj("scenario", "s")),
			`invalid memory record: /payload/good: missing required property "good"`},
		{"timestamp", with("createdAt", "2026-11-03T14:05:00Z"),
			`invalid memory record: /createdAt: must be a UTC timestamp with milliseconds, e.g. 2026-11-03T14:05:00.000Z`},
		{"id", with("id", "nope"), `invalid memory record: /id: must be a record id: 26 characters of Crockford base32`},
		{"missing content", with("content", nil), `invalid memory record: /content: missing required property "content"`},
		{"scope values", with("scope", map[string]any{"agent": 1}), `invalid memory record: /scope/agent: expected string, got number`},
		{"malformed", []byte(`{"id": }`), `record.json:1:8: invalid JSON: unexpected '}', want a value`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateRecordJSON(tt.data)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("error\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestParseWorkspaceConfig(t *testing.T) {
	t.Parallel()
	full := `store: .agent-memory/memory.db
scope: {project: atlas}
actor: human:ana
budgets: {background: 2000, judgment: 1500, example: 1500, awareness: 800, recovery: 400, manual: 800}
ceiling: 6000
promotion: {recurrence: 2, candidateSlice: 3, proposalExpiry: 72h}
eval: {command: ["./evals/run.sh"], timeout: 5m, require: non-regression}
lint: {rules: {near-duplicate: "off", budget-spill: error}}
recall: 4000
staleAfter: 7d
`
	cfg, ps, err := ParseWorkspaceConfig(".agent-ls.yaml", []byte(full))
	if err != nil || len(ps) != 0 {
		t.Fatalf("the issue's example config: %v %s", err, problemsText(ps))
	}
	if cfg.Scope["project"] != "atlas" || cfg.Eval == nil || cfg.Eval.Command[0] != "./evals/run.sh" || cfg.Lint.Rules["near-duplicate"] != "off" || cfg.StaleAfter != "7d" {
		t.Errorf("decoded config %+v", cfg)
	}
	tests := []struct{ name, src, want string }{
		{"empty", "", ""},
		{"comments only", "# nothing set\n", ""},
		{"durations", "promotion: {proposalExpiry: 30m}\nstaleAfter: 2w\neval: {command: [x], timeout: 90s}\n", ""},
		{"unknown key", "stroe: x\n", `1:1-1:6: error: unknown property "stroe" [schema] /stroe` + "\n"},
		{"bad duration", "staleAfter: 1.5d\n", `1:13-1:17: error: must be a duration such as 72h, 30m, 7d or 2w [schema] /staleAfter` + "\n"},
		// The whole composition counts against the ceiling (authored text
		// too): it is no longer tied to the budgets' sum.
		{"ceiling above the budgets' sum", "budgets: {background: 100, judgment: 100, example: 100, awareness: 100, recovery: 100, manual: 100}\nceiling: 20000\n", ""},
		{"ceiling below the budgets' sum", "ceiling: 5000\n", ""},
		{"ceiling not positive", "ceiling: 0\n", `1:10-1:11: error: must be at least 1, got 0 [schema] /ceiling` + "\n"},
		{"severity", "lint: {rules: {X: fatal}}\n", `1:19-1:24: error: must be one of "off", "error", "warning", "info", "hint" (got "fatal") [schema] /lint/rules/X` + "\n"},
		{"eval needs a command", "eval: {timeout: 5m}\n", `1:1-1:5: error: missing required property "command" [schema] /eval/command` + "\n"},
		{"store poll", "storePoll: 250ms\n", ""},
		{"store poll off", "storePoll: \"off\"\n", ""},
		{"store poll too short", "storePoll: 5ms\n", `1:12-1:15: error: storePoll "5ms": at least 100ms, or off [schema] /storePoll` + "\n"},
		{"store poll not a duration", "storePoll: soon\n", `1:12-1:16: error: storePoll "soon": want a duration such as 1s or 500ms, or off [schema] /storePoll` + "\n"},
		{"reserved scope key", "scope: {agent: a}\n", `1:9-1:14: error: scope key "agent" is reserved: it comes from each agent's roleTemplate.name [schema] /scope/agent` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, ps, err := ParseWorkspaceConfig(".agent-ls.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if got := problemsText(ps); got != tt.want {
				t.Errorf("problems\n got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
	if _, _, err := ParseWorkspaceConfig("/w/.agent-ls.yaml", []byte("scope: [\n")); err == nil || !strings.HasPrefix(err.Error(), "/w/.agent-ls.yaml:1:1: invalid YAML") {
		t.Errorf("malformed config error %v, want file:line:col", err)
	}
}

// TestSchemaFiles: the committed schemas compile, are draft 2020-12, and
// document every property (the editor's hover shows these descriptions).
func TestSchemaFiles(t *testing.T) {
	t.Parallel()
	for name, src := range map[string][]byte{"agent": AgentSchema, "record": RecordSchema, "workspace": WorkspaceSchema} {
		var s map[string]any
		if err := json.Unmarshal(src, &s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $schema %v", name, s["$schema"])
		}
		var walk func(path string, v any)
		walk = func(path string, v any) {
			m, ok := v.(map[string]any)
			if !ok {
				if arr, ok := v.([]any); ok {
					for _, x := range arr {
						walk(path+"[]", x)
					}
				}
				return
			}
			if props, ok := m["properties"].(map[string]any); ok && !strings.Contains(path, "/if") {
				for pname, p := range props {
					pm, ok := p.(map[string]any)
					if !ok {
						continue // `true` in a union branch
					}
					desc, _ := pm["description"].(string)
					if desc == "" && !strings.Contains(path, "/then") {
						t.Errorf("%s: %s/properties/%s has no description", name, path, pname)
					}
				}
				if m["type"] == "object" && m["additionalProperties"] == nil {
					t.Errorf("%s: %s has fixed properties but allows any others", name, path)
				}
			}
			for k, c := range m {
				walk(path+"/"+k, c)
			}
		}
		walk("#", s)
	}
	for _, c := range []compiled{agentSchema(), recordSchema(), workspaceSchema()} {
		if c.err != nil {
			t.Error(c.err)
		}
	}
}
