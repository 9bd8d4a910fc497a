import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { StatusParams } from "../protocol";
import { StatusTracker, statusView } from "../status";

const connected: StatusParams = { store: "connected", storePath: "/ws/.agent-memory/memory.db", pendingReviews: 0 };

describe("statusView", () => {
  const cases: { name: string; s: StatusParams | undefined; text: string; severity?: "warning" | "error" }[] = [
    { name: "before the first report", s: undefined, text: "$(sync~spin) agent-ls" },
    { name: "connected, no reviews", s: connected, text: "$(database) agent-ls" },
    { name: "connected, one review", s: { ...connected, pendingReviews: 1 }, text: "$(database) agent-ls · 1 review" },
    { name: "connected, reviews", s: { ...connected, pendingReviews: 3 }, text: "$(database) agent-ls · 3 reviews" },
    { name: "locked", s: { ...connected, store: "locked" }, text: "$(lock) agent-ls: store locked", severity: "warning" },
    { name: "missing", s: { ...connected, store: "missing" }, text: "$(warning) agent-ls: no store", severity: "warning" },
    { name: "corrupt", s: { ...connected, store: "corrupt" }, text: "$(error) agent-ls: store corrupt", severity: "error" },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const v = statusView(c.s);
      assert.equal(v.text, c.text);
      assert.equal(v.severity, c.severity);
    });
  }
  it("puts the store path and the server message in the tooltip", () => {
    const v = statusView({ ...connected, store: "corrupt", message: "bad page 7" });
    assert.match(v.tooltip, /\/ws\/\.agent-memory\/memory\.db/);
    assert.match(v.tooltip, /bad page 7/);
  });
});

describe("StatusTracker", () => {
  it("answers per file, falling back to the global state", () => {
    const t = new StatusTracker();
    assert.equal(t.statusFor("file:///a.agent.yaml"), undefined);
    t.update(connected);
    assert.equal(t.statusFor("file:///a.agent.yaml"), connected);
    const a = { ...connected, uri: "file:///a.agent.yaml", pendingReviews: 2 };
    t.update(a);
    assert.equal(t.statusFor("file:///a.agent.yaml")?.pendingReviews, 2);
    assert.equal(t.statusFor("file:///b.agent.yaml")?.pendingReviews, 0);
  });
  it("carries a global store change into every file but keeps its review count", () => {
    const t = new StatusTracker();
    t.update({ ...connected, uri: "file:///a.agent.yaml", pendingReviews: 2 });
    t.update({ ...connected, store: "locked", message: "held by pid 7" });
    const s = t.statusFor("file:///a.agent.yaml");
    assert.ok(s);
    assert.equal(s.store, "locked");
    assert.equal(s.pendingReviews, 2);
    assert.equal(s.message, "held by pid 7");
  });
  it("forgets closed files and everything on clear", () => {
    const t = new StatusTracker();
    t.update(connected);
    t.update({ ...connected, uri: "file:///a", pendingReviews: 5 });
    t.forget("file:///a");
    assert.equal(t.statusFor("file:///a")?.pendingReviews, 0);
    t.clear();
    assert.equal(t.statusFor("file:///a"), undefined);
  });
});
