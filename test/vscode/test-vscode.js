// make test-vscode: the agent-ls VS Code extension in a real VS Code
// (code-server, under Node 24), driven by Debian's headless Chromium through
// playwright-core (which downloads no browser). scripts/test-vscode.sh
// installs everything, builds agent-ls and the vsix, installs the vsix into
// code-server, writes the user settings and the workspace, then runs this
// script with:
//   CODE_SERVER    code-server's entry script (run with this Node)
//   USER_DATA_DIR  code-server's --user-data-dir (settings.json written)
//   EXTENSIONS_DIR code-server's --extensions-dir (the vsix installed)
//   WORKSPACE      the folder to open (agent files and their memory store)
//   OUT_DIR        where screenshots and code-server's log go
//   CHROMIUM       the browser binary (default /usr/bin/chromium)
//   DEADLINE_MS    the whole run's bound (default 240000)
// It opens the workspace in code-server, then asserts what a user would see:
// the schema diagnostics of an invalid agent file in the Problems panel and
// as squiggles, and the memory inlay hint and code lens on deploy.agent.yaml.
// Every wait polls the page (or code-server's log) against a deadline; none
// is a fixed sleep. Exits 1 with the failing step named.
"use strict";
const { chromium } = require("playwright-core");
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const codeServer = env("CODE_SERVER");
const userDataDir = env("USER_DATA_DIR");
const extensionsDir = env("EXTENSIONS_DIR");
const ws = env("WORKSPACE");
const out = env("OUT_DIR");
const started = Date.now();
const deadline = started + Number(process.env.DEADLINE_MS || 240000);

const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
const left = () => Math.max(1000, deadline - Date.now());

// poll calls fn until it returns a truthy value, or fails with what after
// ms (at most the run's deadline).
async function poll(what, fn, ms = 60000) {
  const until = Math.min(Date.now() + ms, deadline);
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > until) {
      throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${last.message})` : ""}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

let passed = 0;
let failed = 0;
async function step(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok - ${name} (${elapsed()})`);
  } catch (e) {
    failed++;
    console.log(`not ok - ${name} (${elapsed()})\n  ${String((e && e.stack) || e).split("\n").join("\n  ")}`);
    throw e;
  }
}

let server;
let serverExit;
let serverLog = "";
let context;
let page;
let profile;

async function startCodeServer() {
  const logFile = fs.createWriteStream(path.join(out, "code-server.log"));
  // Port 0: code-server binds a free port and prints it.
  server = spawn(process.execPath, [
    codeServer,
    "--bind-addr", "127.0.0.1:0",
    "--auth", "none",
    "--user-data-dir", userDataDir,
    "--extensions-dir", extensionsDir,
    "--disable-telemetry",
    "--disable-update-check",
    "--disable-workspace-trust",
    "--disable-getting-started-override",
    ws,
  ], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PORT: "" }, detached: true });
  const onData = (d) => {
    serverLog += d.toString();
    logFile.write(d);
  };
  server.stdout.on("data", onData);
  server.stderr.on("data", onData);
  let exited = false;
  serverExit = new Promise((resolve) => server.on("exit", resolve));
  server.on("exit", (code) => {
    exited = true;
    serverLog += `\n[code-server exited: ${code}]\n`;
  });
  const m = await poll("code-server to listen (see code-server.log)", () => {
    if (exited) throw new Error(`code-server exited:\n${serverLog}`);
    return /HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(serverLog);
  }, 60000);
  return m[1];
}

// stopCodeServer ends code-server and what it started (its process group:
// the extension host, the language server), and waits for it to exit.
async function stopCodeServer() {
  const group = (sig) => {
    try {
      process.kill(-server.pid, sig);
    } catch {
      // already gone
    }
  };
  group("SIGTERM");
  const gone = await Promise.race([serverExit.then(() => true), new Promise((r) => setTimeout(() => r(false), 10000))]);
  if (!gone) console.log("  code-server did not exit within 10 s of SIGTERM: SIGKILL");
  group("SIGKILL");
}

// The rendered text of the elements matching sel, one string per element
// (Monaco renders spaces as no-break spaces).
const texts = (sel) => page.$$eval(sel, (els) => els.map((e) => (e.textContent || "").replace(/\u00a0/g, " ")));

// openFile opens a workspace file through Quick Open (Ctrl+P) and waits for
// its editor tab to be active and its text rendered.
async function openFile(name, textInFile) {
  await page.keyboard.press("Control+P");
  const input = page.locator(".quick-input-widget input").first();
  await input.waitFor({ state: "visible", timeout: left() });
  await input.fill(name);
  await poll(`Quick Open to list ${name}`, async () =>
    (await texts(".quick-input-list .monaco-list-row")).some((t) => t.includes(name)), 20000);
  await page.keyboard.press("Enter");
  await poll(`the editor of ${name}`, async () => {
    const active = await texts(".tabs-container .tab.active");
    if (!active.some((t) => t.includes(name))) return false;
    const lines = await texts(".editor-group-container.active .monaco-editor .view-lines");
    return lines.some((t) => t.includes(textInFile));
  }, 30000);
}

async function shot(name) {
  const file = path.join(out, name);
  await page.screenshot({ path: file });
  console.log(`  screenshot: ${file}`);
}

async function main() {
  fs.mkdirSync(out, { recursive: true });
  let url;
  await step("code-server starts on 127.0.0.1 with --auth none", async () => {
    url = await startCodeServer();
    console.log(`  ${url} (${/code-server \S+|Code \S+/.exec(serverLog)?.[0] ?? "version not printed"})`);
  });

  profile = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ls-vscode-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1600, height: 1000 },
    timeout: left(),
  });
  page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(60000);

  await step("the workbench opens the workspace", async () => {
    await page.goto(`${url}/?folder=${encodeURIComponent(ws)}`, { timeout: left() });
    await poll("the workbench and its explorer", async () =>
      (await texts(".explorer-folders-view .monaco-list-row")).some((t) => t.includes("deploy.agent.yaml")), 90000);
  });

  await step("schema diagnostics of unknown-key.agent.yaml: squiggles and the Problems panel", async () => {
    await openFile("unknown-key.agent.yaml", "judgements");
    await poll("error squiggles in the editor", async () =>
      (await page.$$(".editor-group-container.active .monaco-editor .squiggly-error")).length >= 3, 60000);
    await page.keyboard.press("Control+Shift+M");
    const want = ['unknown property "judgements"', 'unknown property "sucessCriteria"', 'unknown property "backround"'];
    const rows = await poll("the three schema errors in the Problems panel", async () => {
      const rs = await texts(".markers-panel .monaco-list-row");
      // Each from agent-ls (the row shows the source: agent-ls(schema)).
      return want.every((w) => rs.some((r) => r.includes(w) && r.includes("agent-ls"))) && rs;
    }, 60000);
    for (const w of want) console.log(`  problem: ${rows.find((r) => r.includes(w))}`);
    await shot("diagnostics.png");
  });

  await step("deploy.agent.yaml: inlay hints and code lenses of the learned memories; the store connected", async () => {
    await page.keyboard.press("Control+J"); // hide the panel: more editor lines
    await openFile("deploy.agent.yaml", "heuristics:");
    const hintAndLens = async (what, key, want) => {
      // A hint is injected text at the end of its section's line, in
      // Monaco's view lines; the section's code lens sits above it.
      const hint = await poll(`the inlay hint of ${what}`, async () => {
        const lines = await texts(".editor-group-container.active .monaco-editor .view-line");
        return lines.find((t) => t.includes(key) && want.every((w) => t.includes(w)));
      }, 90000);
      console.log(`  inlay hint: ${hint.trim()}`);
      // The lens must be the one just above the hint's line.
      const lens = await poll(`the code lens above ${key}`, () => page.evaluate((key) => {
        const ed = ".editor-group-container.active .monaco-editor";
        const norm = (e) => (e.textContent || "").replace(/\u00a0/g, " ");
        const line = [...document.querySelectorAll(`${ed} .view-line`)].find((e) => norm(e).includes(key));
        if (!line) return undefined;
        const top = line.getBoundingClientRect().top;
        const height = line.getBoundingClientRect().height;
        const above = [...document.querySelectorAll(`${ed} .codelens-decoration`)].find((e) => {
          const r = e.getBoundingClientRect();
          return r.bottom <= top + 2 && top - r.bottom < height;
        });
        return above ? norm(above) : undefined;
      }, key), 60000);
      if (!/\b1 learned\b/.test(lens)) throw new Error(`the code lens above ${key} reads "${lens}", want "1 learned"`);
      console.log(`  code lens: ${lens.trim()}`);
    };
    // The lesson (earned tier: corroborated by a second conversation, then
    // promoted) under judgments[deploy].heuristics.
    await hintAndLens("the promoted lesson", "heuristics:",
      ["+ “Pause the rollout when the worker queue depth doubles”", "earned", "conv conv-103", "2 conversations"]);
    // The extension's status bar item: the server runs and its store is connected.
    const status = await poll("the Agent LS status bar item with the store connected", async () =>
      (await page.$$eval(".statusbar-item", (els) => els
        .filter((e) => /agent-ls/.test(e.textContent || "") && e.querySelector(".codicon-database"))
        .map((e) => e.textContent || ""))).join(" "), 30000);
    console.log(`  status bar: ${status.trim()} (codicon-database: store connected)`);
    await shot("lesson-hint-and-code-lens.png");
    // The fact (auto tier) learned for background.projectContext.deploy_window,
    // further down: go to its line (Quick Open ":LINE").
    const src = fs.readFileSync(path.join(ws, "deploy.agent.yaml"), "utf8").split("\n");
    const line = src.findIndex((l) => /^\s*projectContext:/.test(l)) + 1;
    await page.keyboard.press("Control+P");
    await page.locator(".quick-input-widget input").first().fill(`:${line + 6}`);
    await page.keyboard.press("Enter");
    await hintAndLens("the learned fact", "projectContext:",
      ["+ “Thursdays after 14:00 ET”", "auto", "conv conv-101"]);
    await shot("fact-hint-and-code-lens.png");
  });
}

let exitCode = 0;
const timer = setTimeout(() => {
  console.log(`not ok - the whole run exceeded its deadline (${elapsed()})`);
  process.exit(1);
}, deadline - Date.now() + 15000);

main()
  .catch(async (e) => {
    exitCode = 1;
    if (failed === 0) console.log(`not ok - setup (${elapsed()})\n  ${e && e.stack ? e.stack : e}`);
    if (page) await page.screenshot({ path: path.join(out, "failure.png") }).catch(() => {});
    console.log(`  screenshot of the failure: ${path.join(out, "failure.png")}; code-server's log: ${path.join(out, "code-server.log")}`);
  })
  .finally(async () => {
    if (context) await context.close().catch(() => {});
    if (server) await stopCodeServer();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
    clearTimeout(timer);
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(exitCode || (failed ? 1 : 0));
  });
