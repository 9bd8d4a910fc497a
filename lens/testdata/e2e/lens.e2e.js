// End-to-end test of `agent-ls lens` in Debian's headless Chromium, driven
// by playwright-core (which downloads no browser). lens/e2e_test.go starts
// the lens as a child process and runs this script with:
//   LENS_URL     the URL the lens printed (with its access token)
//   AGENT_LS     the agent-ls binary, run as a child to change the store
//   WORKSPACE    the workspace directory (the lens's and the CLI's)
//   PROPOSAL     the id of the pending proposal the fixture opened
//   OUT_DIR      where screenshots go
//   CHROMIUM     the browser binary (default /usr/bin/chromium)
// Every wait is on a page state, bounded by a timeout; none is a sleep.
"use strict";
const { chromium } = require("playwright-core");
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const assert = require("node:assert/strict");

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const url = env("LENS_URL");
const bin = env("AGENT_LS");
const ws = env("WORKSPACE");
const proposal = env("PROPOSAL");
const out = env("OUT_DIR");
const base = url.split("?")[0].replace(/\/$/, "");

function cli(...args) {
  return execFileSync(bin, args, { cwd: ws, encoding: "utf8", env: { ...process.env, USER: "ana" } });
}
function cliJSON(...args) {
  return JSON.parse(cli(...args, "--format", "json"));
}

let passed = 0;
let failed = 0;
async function step(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok - ${name}`);
  } catch (e) {
    failed++;
    console.log(`not ok - ${name}\n  ${String(e && e.stack || e).split("\n").join("\n  ")}`);
    throw e;
  }
}

(async () => {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ls-lens-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1100, height: 900 },
    timeout: 30000,
  });
  context.setDefaultTimeout(30000);
  const page = context.pages()[0] || await context.newPage();
  const external = [];
  page.on("request", (r) => { if (!r.url().startsWith(base)) external.push(r.url()); });
  const dialogs = [];
  page.on("dialog", (d) => { dialogs.push(d.message()); d.dismiss(); });
  try {
    await step("a request without the token gets 401 and no data", async () => {
      const res = await page.goto(base + "/");
      assert.equal(res.status(), 401);
      const text = await page.textContent("body");
      assert.ok(!text.includes("Page the on-call"), "401 page shows memory content");
      assert.ok(!text.includes("deploy-ops"), "401 page shows an agent");
      const ev = await page.request.get(base + "/events", { timeout: 5000 }).catch((e) => e);
      assert.ok(!(ev && ev.status && ev.status() === 200), "the event stream answers without the token");
    });

    await step("the landing page shows the pending proposal and both sides of a conflict", async () => {
      await page.goto(url);
      assert.equal(new URL(page.url()).search, "", "the token stays in the address bar");
      const card = page.locator(`.proposal[data-id="${proposal}"]`);
      await card.waitFor();
      assert.match(await card.textContent(), /Page the on-call when a canary fails/);
      assert.equal(await card.locator("pre.diff span.add").first().textContent(), "+- <script>window.__pwned = 1; alert(\"x\")</script> Page the on-call when a canary fails");
      const sides = page.locator(".conflict .side");
      assert.equal(await sides.count(), 2);
      const both = (await sides.allTextContents()).join("\n");
      assert.match(both, /Always deploy on Fridays after the freeze/);
      assert.match(both, /Never deploy on Fridays after the freeze/);
      await page.screenshot({ path: path.join(out, "landing.png"), fullPage: true });
    });

    await step("a <script> content renders as text", async () => {
      const content = page.locator(`.proposal[data-id="${proposal}"] blockquote.content`);
      assert.equal((await content.textContent()).trim(), '<script>window.__pwned = 1; alert("x")</script> Page the on-call when a canary fails');
      assert.equal(await content.locator("script").count(), 0);
      assert.equal(await page.evaluate(() => window.__pwned), undefined);
      assert.deepEqual(dialogs, []);
    });

    await step("times read relative, with the exact UTC time on hover", async () => {
      const when = page.locator(`.proposal[data-id="${proposal}"] time`).first();
      assert.match((await when.textContent()).trim(), /^(just now|\d+ min ago)$/);
      const iso = await when.getAttribute("datetime");
      assert.match(iso, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(await when.getAttribute("title"), iso);
      assert.ok(!/2006-01-02|15:04:05/.test(await page.content()), "the page shows Go's reference time");
    });

    let fresh;
    await step("a proposal opened by another process appears without a reload", async () => {
      await page.waitForFunction(() => document.body.dataset.live === "on");
      await page.evaluate(() => { window.__sameDocument = true; });
      const saved = cliJSON("memory", "save", "--scope", "project=atlas,agent=deploy-ops", "--actor", "agent:deploy-ops",
        "--target", "judgment.deploy.constraints", "--conversation", "c9", "--content", "Never deploy during an open incident");
      fresh = saved.record.id;
      const card = page.locator(`.proposal[data-record="${fresh}"]`);
      await card.waitFor();
      assert.equal(await page.evaluate(() => window.__sameDocument), true, "the page was reloaded");
      await page.screenshot({ path: path.join(out, "live.png"), fullPage: true });
    });

    await step("Approve promotes it (checked through the CLI)", async () => {
      const card = page.locator(`.proposal[data-record="${fresh}"]`);
      await Promise.all([page.waitForURL(/msg=approved/), card.locator("button.approve").click()]);
      await page.locator(".flash.ok").waitFor();
      const shown = cliJSON("memory", "show", fresh);
      assert.ok(shown.promotion, "no promotion after Approve");
      const last = shown.ledger[shown.ledger.length - 1];
      assert.equal(last.op, "approve");
      assert.equal(`${last.actor.kind}:${last.actor.name}`, "human:ana");
      await page.screenshot({ path: path.join(out, "approved.png"), fullPage: true });
    });

    await step("Reject with a reason", async () => {
      const card = page.locator(`.proposal[data-id="${proposal}"]`);
      const record = await card.getAttribute("data-record");
      await card.locator('input[name="reason"]').fill("too broad: the on-call rotation decides");
      await Promise.all([page.waitForURL(/msg=rejected/), card.locator("button.reject").click()]);
      assert.equal(await page.locator(`.proposal[data-id="${proposal}"]`).count(), 0);
      const shown = cliJSON("memory", "show", record);
      assert.equal(shown.promotion, null);
      const rej = shown.ledger.find((e) => e.op === "reject");
      assert.ok(rej, "no reject entry");
      assert.equal(rej.reason, "too broad: the on-call rotation decides");
      await page.screenshot({ path: path.join(out, "rejected.png"), fullPage: true });
    });

    await step("the agent page shows learned lines attributed and the sizes chart", async () => {
      await page.goto(base + "/agent?name=deploy-ops");
      const learned = page.locator(".frag.learned", { hasText: "Never deploy during an open incident" });
      await learned.waitFor();
      assert.equal(await learned.locator(`a[href="/record/${fresh}"]`).count() > 0, true);
      assert.equal(await page.locator("svg.chart rect.bar").count(), 7);
      // Formatted, not markdown source: headings and list items, no "## ".
      assert.equal(await page.locator(".prompt h3.ph", { hasText: "Identity" }).count(), 1);
      assert.ok(!(await page.locator(".prompt").textContent()).includes("## "), "the prompt shows markdown source");
      assert.equal(await learned.evaluate((el) => el.tagName), "LI");
      // The record id is short (its end); its copy button copies the full id.
      const link = learned.locator(`.rid a[href="/record/${fresh}"]`).first();
      assert.equal((await link.textContent()).trim(), "…" + fresh.slice(-8));
      const copy = learned.locator(".rid button.copy").first();
      assert.equal(await copy.getAttribute("data-copy"), fresh);
      assert.match(await copy.getAttribute("aria-label"), new RegExp(`Copy the full id ${fresh}`));
      assert.ok(await copy.isVisible(), "the copy button is hidden with the script loaded");
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
      await copy.click();
      await page.waitForFunction((b) => b.dataset.copied === "yes", await copy.elementHandle());
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), fresh);
      assert.equal(await page.locator("#announce").textContent(), `Copied ${fresh}`);
      await page.screenshot({ path: path.join(out, "agent.png"), fullPage: true });
    });

    await step("the timeline lists the agent's ledger and opens the composition at an entry", async () => {
      await page.goto(base + "/timeline?name=deploy-ops");
      const approved = page.locator("ol.timeline li.op-approve").first();
      await approved.waitFor();
      assert.match(await approved.textContent(), /approved/);
      await page.screenshot({ path: path.join(out, "timeline.png"), fullPage: true });
      // The first entry (oldest, at the end): the composition before anything was learned.
      const oldest = page.locator("ol.timeline li").last().locator(".when a");
      await Promise.all([page.waitForURL(/at=/), oldest.click()]);
      assert.match(await page.locator("#composition h2").textContent(), /Composed prompt as it was /);
      assert.equal(await page.locator(".frag.learned", { hasText: "Never deploy during an open incident" }).count(), 0);
    });

    await step("keep this one resolves the conflict through the gates", async () => {
      await page.goto(base + "/");
      const conflict = page.locator(".conflict").first();
      await conflict.waitFor();
      const keep = conflict.locator(".side", { hasText: "Always deploy on Fridays" });
      const keepId = await keep.getAttribute("data-id");
      const drop = await conflict.locator(".side", { hasText: "Never deploy on Fridays" }).getAttribute("data-id");
      await Promise.all([page.waitForURL(/msg=/), keep.locator("xpath=..").locator("button.keep").click()]);
      const shown = cliJSON("memory", "show", drop);
      assert.ok(shown.record.invalidAt, "the dropped record is still valid");
      assert.match(shown.record.invalidReason || "", new RegExp(`superseded by ${keepId}`));
      assert.equal(await page.locator(".conflict").count(), 0);
    });

    await step("no request left the lens's origin", async () => {
      assert.deepEqual(external, []);
    });
  } finally {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
    console.log(`${passed} passed, ${failed} failed`);
  }
})().catch((e) => { console.error(e); process.exitCode = 1; });

