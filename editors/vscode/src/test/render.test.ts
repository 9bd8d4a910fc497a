import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Proposal } from "../protocol";
import {
  diffStat,
  fenceFor,
  memoryMark,
  oneLine,
  proposalItem,
  proposalItems,
  renderComposedPrompt,
  renderLearnings,
  renderProposal,
  targetString,
  validateSince,
} from "../render";

describe("renderComposedPrompt", () => {
  const result = {
    text: "ignored",
    markdown: "ignored",
    at: "2026-11-03T14:05:00.000Z",
    sections: [
      {
        title: "Background",
        source: "role",
        fragments: [
          { source: "role" as const, text: "You handle refunds.\n" },
          { source: "memory" as const, text: "Deploys freeze on Fridays.\nAsk for the order id.", memoryIds: ["r1", "r2"] },
        ],
      },
      {
        title: "Judgment: refunds",
        source: "instance",
        fragments: [{ source: "instance" as const, text: "Refund under $50 without asking." }],
      },
    ],
  };
  const r = renderComposedPrompt(result, "refunds.agent.yaml");
  const lines = r.markdown.split("\n");

  it("marks exactly the memory-derived lines, with their ids", () => {
    assert.deepEqual(
      r.memoryLines.map((i) => lines[i]),
      ["> [memory r1, r2] Deploys freeze on Fridays.", "> [memory r1, r2] Ask for the order id."],
    );
    const marked = lines.filter((l) => l.startsWith(memoryMark));
    assert.equal(marked.length, 2);
  });
  it("keeps authored text unmarked and under its section", () => {
    const bg = lines.indexOf("## Background");
    const auth = lines.indexOf("You handle refunds.");
    const inst = lines.indexOf("Refund under $50 without asking.");
    assert.ok(bg >= 0 && auth > bg && inst > auth, r.markdown);
  });
  it("names the file, the time and the memory count in the header", () => {
    assert.match(lines[0] ?? "", /refunds\.agent\.yaml at 2026-11-03T14:05:00\.000Z/);
    assert.match(lines[1] ?? "", /2 memory-derived lines/);
  });
  it("keeps the server's own headings and adds none when fragments carry them", () => {
    const h = renderComposedPrompt(
      {
        text: "",
        markdown: "",
        sections: [
          {
            title: "Identity",
            source: "role",
            fragments: [
              { source: "role", text: "## Identity" },
              { source: "role", text: "You are precise." },
              { source: "role", text: "### Tone" },
              { source: "memory", text: "Be brief.", memoryIds: ["m1"] },
            ],
          },
          { title: "Boundaries", source: "role", fragments: [{ source: "role", text: "## Boundaries" }] },
        ],
      },
      "s.agent.yaml",
    );
    assert.deepEqual(h.markdown.split("\n").slice(2), [
      "",
      "## Identity",
      "You are precise.",
      "",
      "### Tone",
      "> [memory m1] Be brief.",
      "",
      "## Boundaries",
      "",
    ]);
    assert.deepEqual(h.memoryLines, [7]);
  });
  it("falls back to the server markdown without sections", () => {
    const f = renderComposedPrompt({ text: "t", markdown: "# Hello\nworld", sections: null }, "a.agent.yaml");
    assert.deepEqual(f.memoryLines, []);
    assert.match(f.markdown, /# Hello\nworld\n$/);
  });
  it("marks empty lines inside a memory fragment too", () => {
    const g = renderComposedPrompt(
      { text: "", markdown: "", sections: [{ title: "S", source: "", fragments: [{ source: "memory", text: "a\n\nb" }] }] },
      "x",
    );
    const gl = g.markdown.split("\n");
    assert.deepEqual(g.memoryLines.map((i) => gl[i]), ["> [memory] a", "> [memory]", "> [memory] b"]);
  });
});

describe("diffStat", () => {
  const cases: [string, string, number, number][] = [
    ["empty", "", 0, 0],
    ["headers are not counted", "--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n+more\n context", 2, 1],
    ["crlf", "+a\r\n-b\r\n", 1, 1],
  ];
  for (const [name, diff, added, removed] of cases) {
    it(name, () => {
      assert.deepEqual(diffStat(diff), { added, removed });
    });
  }
});

const proposal: Proposal = {
  id: "p1",
  kind: "promote",
  recordId: "01JREC",
  tier: "guarded",
  content: "Never   refund\n gift cards.",
  requestedBy: "agent:support",
  createdAt: "2026-11-03T10:00:00.000Z",
  expiresAt: "2026-11-06T10:00:00.000Z",
  diff: "--- before\n+++ after\n@@ -1,1 +1,2 @@\n ctx\n+- Never refund gift cards.\n",
};

describe("proposalItem", () => {
  it("shows kind, record, tier, requester and diff size", () => {
    const it_ = proposalItem(proposal, new Date("2026-11-04T00:00:00Z"));
    assert.equal(it_.label, "$(arrow-up) promote 01JREC");
    assert.equal(it_.description, "guarded tier · by agent:support · created 2026-11-03T10:00:00.000Z");
    assert.equal(it_.detail, "+1 −0  Never refund gift cards.");
    assert.equal(it_.proposal, proposal);
  });
  it("flags an expired proposal and uses the demote icon", () => {
    const it_ = proposalItem({ ...proposal, kind: "demote" }, new Date("2026-11-07T00:00:00Z"));
    assert.match(it_.label, /^\$\(arrow-down\) demote/);
    assert.match(it_.description, /· expired$/);
  });
  it("sorts oldest first", () => {
    const later = { ...proposal, id: "p2", createdAt: "2026-11-04T00:00:00.000Z" };
    assert.deepEqual(proposalItems([later, proposal], new Date(0)).map((i) => i.proposal.id), ["p1", "p2"]);
  });
});

describe("oneLine", () => {
  it("collapses whitespace and truncates with an ellipsis", () => {
    assert.equal(oneLine("a\n  b", 10), "a b");
    assert.equal(oneLine("abcdefghij", 5), "abcd…");
    assert.equal(oneLine("abcde", 5), "abcde");
  });
});

describe("renderProposal", () => {
  it("fences the diff so it renders as a diff", () => {
    const md = renderProposal(proposal);
    assert.match(md, /^# Proposal p1: promote 01JREC$/m);
    assert.match(md, /## Composition diff \(\+1 −0\)\n\n```diff\n--- before\n/);
    assert.match(md, /\+- Never refund gift cards\.\n```\n$/);
    assert.match(md, /^> Never {3}refund$/m);
  });
  it("uses a longer fence when the diff holds backticks", () => {
    assert.equal(fenceFor("a ``` b"), "````");
    assert.equal(fenceFor("none"), "```");
    const md = renderProposal({ ...proposal, diff: "+```js\n+x\n+```" });
    assert.match(md, /````diff\n/);
  });
});

describe("targetString", () => {
  const cases: [Parameters<typeof targetString>[0], string][] = [
    ["judgment.refunds.heuristics", "judgment.refunds.heuristics"],
    [{ primitive: "background", section: "projectContext", key: "deploy_window" }, "background.projectContext.deploy_window"],
    [{ primitive: "judgment", domain: "refunds", slot: "constraints" }, "judgment.refunds.constraints"],
    [{ primitive: "example", judgmentDomain: "refunds" }, "example.refunds"],
    [{ primitive: "manual", capability: "deploy", section: "workflows" }, "manual.deploy.workflows"],
    [{ primitive: "awareness" }, "awareness"],
    [undefined, ""],
  ];
  for (const [t, want] of cases) {
    it(want || "undefined", () => {
      assert.equal(targetString(t), want);
    });
  }
});

describe("renderLearnings", () => {
  it("lists newest first with provenance", () => {
    const md = renderLearnings(
      [
        { op: "promote", at: "2026-11-01T00:00:00.000Z", recordId: "r1", content: "old", target: "awareness", tier: "auto", actor: "agent:a", conversationId: "c1" },
        { op: "demote", at: "2026-11-02T00:00:00.000Z", recordId: "r2", content: "new", target: { primitive: "recovery" }, tier: "earned", actor: "human:bob", runId: "run9" },
      ],
      "7d",
      "a.agent.yaml",
    );
    assert.match(md, /^# Learnings of a\.agent\.yaml since 7d$/m);
    const demote = md.indexOf("**demote** `recovery` (earned) — new");
    const promote = md.indexOf("**promote** `awareness` (auto) — old");
    assert.ok(demote > 0 && promote > demote, md);
    assert.match(md, /record r1 · conv c1/);
    assert.match(md, /human:bob · record r2 · run run9/);
  });
  it("leaves out a missing target and tier and shows the reason", () => {
    const md = renderLearnings(
      [{ op: "demote", at: "2026-11-02T00:00:00.000Z", recordId: "r3", content: "gone", actor: "human:bob", reason: "wrong" }],
      "7d",
      "a",
    );
    assert.match(md, /^- \*\*demote\*\* — gone — reason: wrong$/m);
  });
  it("says so when nothing was learned", () => {
    assert.match(renderLearnings([], "1h", "a"), /Nothing was promoted or demoted/);
  });
});

describe("validateSince", () => {
  const valid = ["7d", "2w", "0d", "36h", "90m", "1h30m", "1.5h", " 7d ", "2026-11-03T14:05:00Z", "2026-11-03T14:05:00.123+02:00"];
  const invalid = ["", "  ", "7", "d", "-1d", "1.5d", "07d", "yesterday", "2026-11-03", "2026-13-45T99:99:99Z", "7days"];
  for (const s of valid) {
    it(`accepts ${JSON.stringify(s)}`, () => {
      assert.equal(validateSince(s), undefined);
    });
  }
  for (const s of invalid) {
    it(`rejects ${JSON.stringify(s)}`, () => {
      assert.equal(typeof validateSince(s), "string");
    });
  }
});
