// LSP benchmark harness: agent-ls serve against yaml-language-server on the
// same file, both over stdio with vscode-jsonrpc.
//
//   node harness.js AGENT_LS_BINARY WORKSPACE_DIR [EDITS]
//   node harness.js --rss AGENT_LS_BINARY WORKSPACE_DIR
//
// --rss: open every *.agent.yaml of WORKSPACE_DIR (go run ./bench/gen
// -records 100000 -files 10), wait for the diagnostics of all of them
// (agent-ls: then an inlayHint per file, so every file's
// composition is built and cached), wait a second and read VmRSS/VmHWM, for
// agent-ls and the stock yaml-language-server.
//
// WORKSPACE_DIR holds bench.agent.yaml and its store (go run ./bench/gen).
// yaml-language-server validates the file against schema/agent.schema.json
// only; it runs twice: stock (200 ms validation delay, what a user sees) and
// from a copy of its package under a temp dir with validationDelayMs set to
// 0 (compute against compute). Per server: initialize -> first
// publishDiagnostics, EDITS didChange -> the matching
// publishDiagnostics (median, p95) — the first publish of the version and
// the one with the settled diagnostics (for agent-ls its lint pass, the
// row issue 10 compares) — and RSS (VmRSS/VmHWM) after the edits. Every
// server gets the same edits (the same text per version): as ranged changes
// when it advertises incremental sync (textDocumentSync.change 2), else as
// the whole text.
// Prints one JSON object per server and a text table.
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const rpc = require('vscode-jsonrpc/node');
const lsp = require('vscode-languageserver-protocol');

const rssMode = process.argv[2] === '--rss';
const [bin, root, editsArg] = process.argv.slice(rssMode ? 3 : 2);
if (!bin || !root) {
  console.error('usage: node harness.js [--rss] AGENT_LS_BINARY WORKSPACE_DIR [EDITS]');
  process.exit(2);
}
const EDITS = Number(editsArg || 50);
const file = path.join(root, 'bench.agent.yaml');
const uri = pathToFileURL(file).href;
const text = fs.readFileSync(file, 'utf8');
const schemaPath = path.resolve(__dirname, '..', '..', 'schema', 'agent.schema.json');

// patchedYAMLServer copies the installed yaml-language-server (with its
// dependencies) under a temp dir and sets its validation delay to 0.
function patchedYAMLServer() {
  const nm = path.join(__dirname, 'node_modules');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-ls-bench-yamlls-'));
  fs.cpSync(nm, path.join(tmp, 'node_modules'), { recursive: true });
  const settings = path.join(tmp, 'node_modules', 'yaml-language-server', 'out', 'server', 'src', 'yamlSettings.js');
  const src = fs.readFileSync(settings, 'utf8');
  const patched = src.replace(/this\.validationDelayMs = 200;/, 'this.validationDelayMs = 0;');
  if (patched === src) throw new Error('validationDelayMs = 200 not found in ' + settings);
  fs.writeFileSync(settings, patched);
  return { tmp, main: path.join(tmp, 'node_modules', 'yaml-language-server', 'bin', 'yaml-language-server') };
}

function rss(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => Number((s.match(new RegExp(k + ':\\s+(\\d+)')) || [0, 0])[1]);
    // RssAnon is the heap and stacks; RssFile the pages of mapped files
    // (the bbolt store) left resident.
    return { rssMB: kb('VmRSS') / 1024, hwmMB: kb('VmHWM') / 1024, anonMB: kb('RssAnon') / 1024, fileMB: kb('RssFile') / 1024 };
  } catch {
    return { rssMB: NaN, hwmMB: NaN, anonMB: NaN, fileMB: NaN };
  }
}

// rangedChange is the change that turns prev into next: the span between
// their common prefix and suffix, in LSP positions (UTF-16 code units, which
// JavaScript string indices are; lines end at \r\n, \r or \n).
function rangedChange(prev, next) {
  let a = 0;
  while (a < prev.length && a < next.length && prev[a] === next[a]) a++;
  let b = 0;
  while (b < prev.length - a && b < next.length - a && prev[prev.length - 1 - b] === next[next.length - 1 - b]) b++;
  const position = (off) => {
    const before = prev.slice(0, off);
    const lines = before.split(/\r\n|\r|\n/);
    return { line: lines.length - 1, character: lines[lines.length - 1].length };
  };
  return { range: { start: position(a), end: position(prev.length - b) }, text: next.slice(a, next.length - b) };
}

function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))];
}

const yamlSettings = { yaml: { validate: true, hover: false, completion: false, format: { enable: false }, schemaStore: { enable: false }, schemas: { [pathToFileURL(schemaPath).href]: ['*.agent.yaml'] } } };

async function measure(name, cmd, args) {
  const proc = spawn(cmd, args, { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
  proc.stderr.on('data', () => {});
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));
  // waiter: the first publish of a version; finalWaiter: the publish of a
  // version with as many diagnostics as the settled publish of version 1
  // (agent-ls publishes schema problems at once and again with its lint
  // findings; yaml-language-server publishes once). last: every publish.
  let waiter = null, finalWaiter = null;
  const last = { at: 0, count: -1 };
  conn.onNotification(lsp.PublishDiagnosticsNotification.type, (p) => {
    if (p.uri !== uri) return;
    last.at = performance.now();
    last.count = p.diagnostics.length;
    const versionOK = (w) => p.version === undefined || p.version === null || p.version === w.version;
    if (waiter && versionOK(waiter)) {
      const w = waiter;
      waiter = null;
      w.resolve(p);
    }
    if (finalWaiter && versionOK(finalWaiter) && p.diagnostics.length === finalWaiter.count) {
      const w = finalWaiter;
      finalWaiter = null;
      w.resolve(p);
    }
  });
  conn.onRequest('workspace/configuration', (p) => p.items.map((it) => (it.section === 'yaml' ? yamlSettings.yaml : it.section ? undefined : yamlSettings)));
  conn.onRequest('client/registerCapability', () => null);
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onRequest('workspace/inlayHint/refresh', () => null);
  conn.onRequest('workspace/semanticTokens/refresh', () => null);
  conn.onNotification(() => {});
  conn.listen();
  const awaitDiag = (version) => new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${name}: no publishDiagnostics for version ${version} in 30s`)), 30000);
    waiter = { version, resolve: (p) => { clearTimeout(t); resolve(p); } };
  });
  const awaitFinal = (version, count) => new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${name}: no publishDiagnostics with ${count} diagnostics for version ${version} in 30s`)), 30000);
    finalWaiter = { version, count, resolve: (p) => { clearTimeout(t); resolve(p); } };
  });

  const t0 = performance.now();
  const init = await conn.sendRequest(lsp.InitializeRequest.type, {
    processId: process.pid, rootUri: pathToFileURL(root).href, workspaceFolders: [{ uri: pathToFileURL(root).href, name: 'bench' }],
    capabilities: { textDocument: { publishDiagnostics: { versionSupport: true }, synchronization: { didSave: true } }, workspace: { configuration: true } },
    initializationOptions: {},
  });
  const tds = init.capabilities.textDocumentSync;
  const incremental = (typeof tds === 'number' ? tds : tds && tds.change) === lsp.TextDocumentSyncKind.Incremental;
  conn.sendNotification(lsp.InitializedNotification.type, {});
  conn.sendNotification(lsp.DidChangeConfigurationNotification.type, { settings: yamlSettings });
  const first = awaitDiag(1);
  conn.sendNotification(lsp.DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'yaml', version: 1, text } });
  await first;
  const initMs = performance.now() - t0;
  // yaml-language-server: prove the schema is associated (else it would
  // validate nothing, fast).
  let schemas = '';
  if (name.startsWith('yaml-ls')) {
    const got = await conn.sendRequest('yaml/get/jsonSchema', uri);
    schemas = (got || []).map((s) => s.uri).join(',');
    if (!schemas.includes('agent.schema.json')) throw new Error(`${name}: agent.schema.json not associated (${schemas})`);
  }

  // The settled diagnostics of version 1: the last publish after 2 s
  // without one.
  while (performance.now() - last.at < 2000) await new Promise((r) => setTimeout(r, 100));
  const finalCount = last.count;

  // ds: didChange -> first publish of the version; full: -> the publish
  // with the settled count (agent-ls: schema + lint + overlay).
  const ds = [], full = [];
  let prev = text;
  for (let i = 0; i < EDITS; i++) {
    const v = i + 2;
    const next = text + `# edit ${i}\n`;
    const change = incremental ? rangedChange(prev, next) : { text: next };
    prev = next;
    const done = awaitDiag(v);
    const settled = awaitFinal(v, finalCount);
    const start = performance.now();
    conn.sendNotification(lsp.DidChangeTextDocumentNotification.type, { textDocument: { uri, version: v }, contentChanges: [change] });
    await done;
    ds.push(performance.now() - start);
    await settled;
    full.push(performance.now() - start);
  }
  // agent-ls: inlayHint over the whole file and hover on the heuristics
  // key (line 8), on the unchanged last version.
  const timed = async (n, fn) => {
    const xs = [];
    for (let i = 0; i < n; i++) {
      const start = performance.now();
      await fn();
      xs.push(performance.now() - start);
    }
    return { p50: pct(xs, 50), p95: pct(xs, 95) };
  };
  let hints, hover, outline, complete;
  if (name === 'agent-ls') {
    let count = 0;
    hints = await timed(EDITS, async () => {
      const hs = await conn.sendRequest('textDocument/inlayHint', { textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 3000, character: 0 } } });
      count = hs.length;
    });
    if (count === 0) throw new Error('agent-ls: no inlay hints');
    hints.count = count;
    hover = await timed(EDITS, () => conn.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line: 7, character: 8 } }));
    let symbols = 0;
    outline = await timed(EDITS, async () => {
      const syms = await conn.sendRequest('textDocument/documentSymbol', { textDocument: { uri } });
      const walk = (xs) => xs.reduce((n, x) => n + 1 + walk(x.children || []), 0);
      symbols = walk(syms);
    });
    if (symbols === 0) throw new Error('agent-ls: no document symbols');
    outline.count = symbols;
    // Completion of a persona key (line 5, "    tone: terse", at its key).
    let items = 0;
    complete = await timed(EDITS, async () => {
      const r = await conn.sendRequest('textDocument/completion', { textDocument: { uri }, position: { line: 4, character: 4 } });
      items = (Array.isArray(r) ? r : r.items).length;
    });
    if (items === 0) throw new Error('agent-ls: no completion items for a persona key');
    complete.count = items;
  }
  const mem = rss(proc.pid);
  await conn.sendRequest(lsp.ShutdownRequest.type);
  conn.sendNotification(lsp.ExitNotification.type);
  await new Promise((r) => { proc.on('exit', r); setTimeout(() => { proc.kill(); r(); }, 3000); });
  conn.dispose();
  return { server: name, sync: incremental ? 'incremental' : 'full', edits: EDITS, p50ms: pct(ds, 50), p95ms: pct(ds, 95), fullP50ms: pct(full, 50), fullP95ms: pct(full, 95), diagnostics: finalCount, initMs, ...mem, schemas, hints, hover, outline, complete };
}

// cpuTicks is the CPU time (user + system, clock ticks) process pid has
// used so far, or NaN when it cannot be read.
function cpuTicks(pid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return NaN;
  }
}

// untilIdle resolves once process pid has used no CPU for a second (four
// reads 250 ms apart), or after 120 s; it gives the time it waited.
async function untilIdle(pid) {
  const t0 = performance.now();
  let last = cpuTicks(pid), still = 0;
  while (still < 4 && performance.now() - t0 < 120000 && !Number.isNaN(last)) {
    await new Promise((r) => setTimeout(r, 250));
    const now = cpuTicks(pid);
    still = now === last ? still + 1 : 0;
    last = now;
  }
  return performance.now() - t0;
}

// measureRSS opens every agent file of the workspace and reads the
// server's memory once all of them have diagnostics and inlay hints and
// the server has gone idle (untilIdle).
async function measureRSS(name, cmd, args) {
  const files = fs.readdirSync(root).filter((f) => f.endsWith('.agent.yaml')).sort();
  const proc = spawn(cmd, args, { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
  proc.stderr.on('data', () => {});
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));
  const waiting = new Map();
  conn.onNotification(lsp.PublishDiagnosticsNotification.type, (p) => {
    const w = waiting.get(p.uri);
    if (w) { waiting.delete(p.uri); w(); }
  });
  conn.onRequest('workspace/configuration', (p) => p.items.map((it) => (it.section === 'yaml' ? yamlSettings.yaml : it.section ? undefined : yamlSettings)));
  conn.onRequest('client/registerCapability', () => null);
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onRequest('workspace/inlayHint/refresh', () => null);
  conn.onRequest('workspace/semanticTokens/refresh', () => null);
  conn.onNotification(() => {});
  conn.listen();
  await conn.sendRequest(lsp.InitializeRequest.type, {
    processId: process.pid, rootUri: pathToFileURL(root).href, workspaceFolders: [{ uri: pathToFileURL(root).href, name: 'bench' }],
    capabilities: { textDocument: { publishDiagnostics: { versionSupport: true }, synchronization: { didSave: true } }, workspace: { configuration: true } },
    initializationOptions: {},
  });
  conn.sendNotification(lsp.InitializedNotification.type, {});
  conn.sendNotification(lsp.DidChangeConfigurationNotification.type, { settings: yamlSettings });
  const t0 = performance.now();
  const uris = files.map((f) => pathToFileURL(path.join(root, f)).href);
  const all = uris.map((u) => new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${name}: no publishDiagnostics for ${u} in 60s`)), 60000);
    waiting.set(u, () => { clearTimeout(t); resolve(); });
  }));
  files.forEach((f, i) => conn.sendNotification(lsp.DidOpenTextDocumentNotification.type, {
    textDocument: { uri: uris[i], languageId: 'yaml', version: 1, text: fs.readFileSync(path.join(root, f), 'utf8') } }));
  await Promise.all(all);
  const diagMs = performance.now() - t0;
  if (name === 'agent-ls') {
    for (const u of uris) {
      await conn.sendRequest('textDocument/inlayHint', { textDocument: { uri: u }, range: { start: { line: 0, character: 0 }, end: { line: 3000, character: 0 } } });
    }
  }
  // Steady: the server has gone idle (its lint passes done, the freed heap
  // handed back), not a fixed time after the last answer, which sampled
  // some runs mid-pass and read 30 MB more.
  const idleMs = await untilIdle(proc.pid);
  const mem = rss(proc.pid);
  await conn.sendRequest(lsp.ShutdownRequest.type);
  conn.sendNotification(lsp.ExitNotification.type);
  await new Promise((r) => { proc.on('exit', r); setTimeout(() => { proc.kill('SIGKILL'); r(); }, 3000); });
  conn.dispose();
  return { server: name, files: files.length, diagMs, idleMs, ...mem };
}

async function rssMain() {
  const stock = path.join(__dirname, 'node_modules', 'yaml-language-server', 'bin', 'yaml-language-server');
  const rows = [];
  rows.push(await measureRSS('agent-ls', bin, ['serve', '--no-watch', '--log-level', 'error']));
  rows.push(await measureRSS('yaml-ls (stock)', process.execPath, [stock, '--stdio']));
  for (const r of rows) console.log(JSON.stringify(r));
  const f1 = (x) => x.toFixed(1);
  console.log('\n| server | open files | all diagnostics ms | RSS MB (peak) |');
  console.log('|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.server} | ${r.files} | ${f1(r.diagMs)} | ${f1(r.rssMB)} (${f1(r.hwmMB)}) |`);
}

if (rssMode) {
  rssMain().catch((e) => {
    console.error('harness:', e.message);
    process.exit(1);
  });
} else (async () => {
  const fast = patchedYAMLServer();
  const stock = path.join(__dirname, 'node_modules', 'yaml-language-server', 'bin', 'yaml-language-server');
  try {
    const rows = [];
    rows.push(await measure('agent-ls', bin, ['serve', '--no-watch', '--log-level', 'error']));
    rows.push(await measure('yaml-ls (delay 0)', process.execPath, [fast.main, '--stdio']));
    rows.push(await measure('yaml-ls (stock)', process.execPath, [stock, '--stdio']));
    for (const r of rows) console.log(JSON.stringify(r));
    const a = rows[0];
    const f2 = (x) => x.toFixed(1);
    console.log('\n| server | sync | didChange->diagnostics p50 ms | p95 ms | initialize->first diagnostics ms | RSS MB (peak) | p50 ratio peer/agent-ls | p95 ratio | init ratio |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const r of rows) {
      console.log(`| ${r.server} | ${r.sync} | ${f2(r.p50ms)} | ${f2(r.p95ms)} | ${f2(r.initMs)} | ${f2(r.rssMB)} (${f2(r.hwmMB)}) | ${f2(r.p50ms / a.p50ms)}x | ${f2(r.p95ms / a.p95ms)}x | ${f2(r.initMs / a.initMs)}x |`);
    }
    console.log('\nfull analysis: didChange -> the publish with the settled diagnostics (agent-ls: schema + lint + overlay, its second publish; yaml-ls: its only one)');
    console.log('| server | settled diagnostics | full p50 ms | full p95 ms | p50 ratio peer/agent-ls | p95 ratio |');
    console.log('|---|---|---|---|---|---|');
    for (const r of rows) {
      console.log(`| ${r.server} | ${r.diagnostics} | ${f2(r.fullP50ms)} | ${f2(r.fullP95ms)} | ${f2(r.fullP50ms / a.fullP50ms)}x | ${f2(r.fullP95ms / a.fullP95ms)}x |`);
    }
    const h = rows[0].hints, hv = rows[0].hover;
    const o = rows[0].outline, cp = rows[0].complete;
    console.log(`\nagent-ls inlayHint (whole file, ${h.count} hints) p50 ${f2(h.p50)} ms, p95 ${f2(h.p95)} ms; hover (heuristics key) p50 ${f2(hv.p50)} ms, p95 ${f2(hv.p95)} ms`);
    console.log(`agent-ls documentSymbol (${o.count} symbols) p50 ${f2(o.p50)} ms, p95 ${f2(o.p95)} ms; completion (${cp.count} items) p50 ${f2(cp.p50)} ms, p95 ${f2(cp.p95)} ms`);
  } finally {
    fs.rmSync(fast.tmp, { recursive: true, force: true });
  }
})().catch((e) => {
  console.error('harness:', e.message);
  process.exit(1);
});
