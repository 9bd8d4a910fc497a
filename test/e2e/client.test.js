// End-to-end test of `agent-ls serve` driven by vscode-jsonrpc and
// vscode-languageserver-protocol, the protocol implementation VS Code uses.
//
//   node client.test.js AGENT_LS_BINARY WORKSPACE_DIR [OUTLINE_OUT]
//
// WORKSPACE_DIR holds deploy.agent.yaml and a store with one promoted fact
// ("Deploys go out Tuesdays ...") and one pending proposal (the escalation
// trigger "Ask before deleting any resource in prod"); test/e2e/e2e_test.go
// prepares it; it compares the outline written to OUTLINE_OUT (the raw
// documentSymbol answer) with its golden file. Exits 0 when every check
// passes, 1 otherwise.
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const rpc = require('vscode-jsonrpc/node');
const lsp = require('vscode-languageserver-protocol');

const [bin, root, outlineOut] = process.argv.slice(2);
if (!bin || !root) {
  console.error('usage: node client.test.js AGENT_LS_BINARY WORKSPACE_DIR');
  process.exit(2);
}
const TRIGGER = 'Ask before deleting any resource in prod';
const file = path.join(root, 'deploy.agent.yaml');
const uri = pathToFileURL(file).href;
const text = fs.readFileSync(file, 'utf8');

const failsafe = setTimeout(() => fail('timed out (30s)'), 30000);
function fail(msg) {
  console.error('FAIL: ' + msg);
  process.exit(1);
}
function check(cond, msg) {
  if (!cond) fail(msg);
  console.log('ok - ' + msg);
}

const proc = spawn(bin, ['serve', '--log-level', 'debug'], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, USER: 'e2e' } });
let stderr = '';
proc.stderr.on('data', (d) => { stderr += d; });
const exited = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));

const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));

// Recorded server -> client traffic, and waiters woken on every message.
const diagnostics = [];
const statuses = [];
let refreshes = 0;
const applyEdits = [];
const waiters = new Set();
function wake() { for (const w of waiters) w(); }
function until(what, cond) {
  return new Promise((resolve) => {
    const tick = () => {
      const v = cond();
      if (v) { waiters.delete(tick); resolve(v); }
    };
    waiters.add(tick);
    tick();
  }).catch((e) => fail(what + ': ' + e));
}

conn.onNotification(lsp.PublishDiagnosticsNotification.type, (p) => { diagnostics.push(p); wake(); });
conn.onNotification('agent-ls/status', (p) => { statuses.push(p); wake(); });
conn.onNotification(lsp.LogMessageNotification.type, () => {});
conn.onNotification(lsp.ShowMessageNotification.type, (p) => console.log('# showMessage: ' + p.message));
conn.onRequest(lsp.InlayHintRefreshRequest.type, () => { refreshes++; wake(); return null; });
conn.onRequest(lsp.ApplyWorkspaceEditRequest.type, (p) => { applyEdits.push(p); wake(); return { applied: true }; });
conn.listen();

// applyTextEdits applies one document's edits (LSP ranges, UTF-16 columns)
// from last to first, as an editor applies a workspace edit.
function applyTextEdits(doc, edits) {
  const starts = [0];
  for (let i = 0; i < doc.length; i++) if (doc[i] === '\n') starts.push(i + 1);
  const off = (p) => starts[p.line] + p.character;
  const sorted = [...edits].sort((a, b) => off(b.range.start) - off(a.range.start));
  let out = doc;
  for (const e of sorted) out = out.slice(0, off(e.range.start)) + e.newText + out.slice(off(e.range.end));
  return out;
}

function diagsAt(version) {
  return diagnostics.find((d) => d.uri === uri && d.version === version);
}
const fullRange = { start: { line: 0, character: 0 }, end: { line: text.split('\n').length + 5, character: 0 } };
function hints() {
  return conn.sendRequest(lsp.InlayHintRequest.type, { textDocument: { uri }, range: fullRange });
}
function labelOf(h) {
  return typeof h.label === 'string' ? h.label : h.label.map((p) => p.value).join('');
}

async function main() {
  const init = await conn.sendRequest(lsp.InitializeRequest.type, {
    processId: process.pid,
    rootUri: pathToFileURL(root).href,
    workspaceFolders: [{ uri: pathToFileURL(root).href, name: 'e2e' }],
    capabilities: {
      workspace: { inlayHint: { refreshSupport: true }, applyEdit: true },
      // As VS Code: tooltips come from inlayHint/resolve.
      textDocument: { inlayHint: { resolveSupport: { properties: ['tooltip'] } }, hover: { contentFormat: ['markdown'] }, publishDiagnostics: { versionSupport: true } },
    },
    initializationOptions: { actor: 'human:e2e' },
  });
  const caps = init.capabilities;
  check(caps.inlayHintProvider && caps.inlayHintProvider.resolveProvider === true, 'initialize advertises inlayHintProvider with resolveProvider');
  check(caps.executeCommandProvider && caps.executeCommandProvider.commands.includes('agent-ls.approve'), 'initialize advertises agent-ls.approve');
  check(caps.textDocumentSync && caps.textDocumentSync.change === lsp.TextDocumentSyncKind.Incremental, 'incremental text sync');
  await conn.sendNotification(lsp.InitializedNotification.type, {});

  await conn.sendNotification(lsp.DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'yaml', version: 1, text } });
  const d1 = await until('diagnostics v1', () => diagsAt(1));
  check(Array.isArray(d1.diagnostics) && d1.diagnostics.length === 0, 'clean fixture publishes [] at version 1');
  await until('status', () => statuses.find((s) => s.uri === uri && s.store === 'connected' && s.pendingReviews === 1));
  check(true, 'agent-ls/status: store connected, 1 pending review');

  // An edit with a typo gets its diagnostic at the exact key; fixing it clears.
  const broken = text.replace('  tone: runbook', '  tone: runbook').replace('  methodology:', '  methodolgy:');
  await conn.sendNotification(lsp.DidChangeTextDocumentNotification.type, { textDocument: { uri, version: 2 }, contentChanges: [{ text: broken }] });
  const d2 = await until('diagnostics v2', () => diagsAt(2));
  const line = broken.split('\n').findIndex((l) => l.startsWith('  methodolgy:'));
  const unknown = d2.diagnostics.find((d) => d.message === 'unknown property "methodolgy"');
  check(unknown && unknown.range.start.line === line && unknown.range.start.character === 2 && unknown.range.end.character === 12,
    'unknown key diagnostic on the key itself (' + JSON.stringify(unknown && unknown.range) + ')');
  const fixes = await conn.sendRequest(lsp.CodeActionRequest.type, { textDocument: { uri }, range: unknown.range, context: { diagnostics: [unknown] } });
  const fix = fixes.find((a) => a.kind === 'quickfix' && a.edit);
  const fixEdit = fix && fix.edit.changes[uri] && fix.edit.changes[uri][0];
  check(fixEdit && fixEdit.newText === 'methodology' && fixEdit.range.start.line === line && fixEdit.range.start.character === 2,
    'quick fix renames the misspelled key as a workspace edit (' + (fix && fix.title) + ')');
  const applied = applyTextEdits(broken, fix.edit.changes[uri]);
  check(applied === text, 'the quick fix applied to the text gives back the fixture');
  await conn.sendNotification(lsp.DidChangeTextDocumentNotification.type, { textDocument: { uri, version: 3 }, contentChanges: [{ text: applied }] });
  const d3 = await until('diagnostics v3', () => diagsAt(3));
  check(d3.diagnostics.length === 0, 'fixed text publishes [] at version 3');

  check(caps.completionProvider && caps.documentSymbolProvider, 'initialize advertises completion and document symbols');
  const lines = text.split('\n');
  const incident = lines.findIndex((l) => l === '    - domain: incident');
  const atKey = lines.findIndex((l, i) => i > incident && l === '      escalationTriggers:');
  const completion = await conn.sendRequest(lsp.CompletionRequest.type, { textDocument: { uri }, position: { line: atKey, character: 6 } });
  const items = Array.isArray(completion) ? completion : completion.items;
  const labels = items.map((i) => i.label);
  check(labels.includes('constraints') && labels.includes('examples') && !labels.includes('heuristics') && !labels.includes('domain'),
    'completion offers the incident judgment\'s missing keys: ' + labels.join(', '));
  const keys = items.filter((i) => i.kind === lsp.CompletionItemKind.Property).map((i) => i.label).sort();
  check(keys.join(',') === 'constraints,examples', 'the keys offered at the key column are exactly the unwritten ones: ' + keys.join(','));
  const constraints = items.find((i) => i.label === 'constraints');
  check(constraints.textEdit && constraints.textEdit.newText === 'constraints: ' && constraints.detail === 'optional' &&
    constraints.documentation && constraints.documentation.value.length > 0, 'a key item inserts "key: " with its schema description');

  // JSON that does not parse yet: the key being typed.
  const jsonUri = pathToFileURL(path.join(root, 'typing.agent.json')).href;
  const typing = '{"roleTemplate": {"name": "t", "persona": {"identity": "i", "';
  await conn.sendNotification(lsp.DidOpenTextDocumentNotification.type, { textDocument: { uri: jsonUri, languageId: 'json', version: 1, text: typing } });
  const jc = await conn.sendRequest(lsp.CompletionRequest.type, { textDocument: { uri: jsonUri }, position: { line: 0, character: typing.length } });
  const jl = (Array.isArray(jc) ? jc : jc.items).map((i) => i.label);
  check(jl.includes('tone') && jl.includes('priorities') && !jl.includes('identity') && !jl.includes('name'),
    'completion in unparsable JSON offers the persona\'s unwritten keys: ' + jl.join(', '));
  await conn.sendNotification(lsp.DidCloseTextDocumentNotification.type, { textDocument: { uri: jsonUri } });

  // The workspace config completes from its own schema.
  const cfgUri = pathToFileURL(path.join(root, '.agent-ls.yaml')).href;
  await conn.sendNotification(lsp.DidOpenTextDocumentNotification.type, { textDocument: { uri: cfgUri, languageId: 'yaml', version: 1, text: 'eval:\n  \n' } });
  const cc = await conn.sendRequest(lsp.CompletionRequest.type, { textDocument: { uri: cfgUri }, position: { line: 1, character: 2 } });
  const ci = Array.isArray(cc) ? cc : cc.items;
  const cl = ci.map((i) => i.label).sort();
  check(cl.join(',') === 'command,require,timeout' && ci.find((i) => i.label === 'command').detail === 'required',
    'completion in .agent-ls.yaml offers eval\'s keys, command required: ' + cl.join(','));
  await conn.sendNotification(lsp.DidCloseTextDocumentNotification.type, { textDocument: { uri: cfgUri } });

  const symbols = await conn.sendRequest(lsp.DocumentSymbolRequest.type, { textDocument: { uri } });
  if (outlineOut) fs.writeFileSync(outlineOut, JSON.stringify(symbols));
  const role = symbols.find((s) => s.name === 'roleTemplate');
  const judgments = role && role.children.find((s) => s.name === 'judgments');
  check(judgments && judgments.children.map((j) => j.name).join(',') === 'deploy,incident', 'outline lists the judgments by domain');
  check(symbols.some((s) => s.name === 'background') && symbols.some((s) => s.name === 'mission'), 'outline has mission and background');

  let hs = await hints();
  const cand = hs.find((h) => labelOf(h).includes(TRIGGER));
  check(cand && labelOf(cand).startsWith('(candidate) '), 'pending trigger shown as a candidate hint');
  const fact = hs.find((h) => labelOf(h).startsWith('+ “Deploys go out Tuesdays'));
  check(fact, 'promoted fact shown as a memory hint');
  check(fact.tooltip === undefined && fact.data && fact.data.uri === uri && fact.data.kind === 'promoted', 'hint carries data, its tooltip is left to resolve');
  const resolved = await conn.sendRequest(lsp.InlayHintResolveRequest.type, fact);
  check(resolved.tooltip && resolved.tooltip.value.includes(fact.data.recordId) && resolved.tooltip.value.includes('History'), 'inlayHint/resolve fills the provenance tooltip');

  const triggerLine = cand.position.line;
  const hover = await conn.sendRequest(lsp.HoverRequest.type, { textDocument: { uri }, position: { line: triggerLine, character: 10 } });
  check(hover && hover.contents.value.includes(TRIGGER), 'hover on the section shows the learned line');

  const actions = await conn.sendRequest(lsp.CodeActionRequest.type, { textDocument: { uri }, range: fullRange, context: { diagnostics: [] } });
  const approve = actions.find((a) => a.title.startsWith('Approve promote of') && a.title.includes('Ask before'));
  check(approve && approve.command && approve.command.arguments[0].diff.includes('+- ' + TRIGGER), 'approve code action carries the composition diff');
  const before = refreshes;
  const res = await conn.sendRequest(lsp.ExecuteCommandRequest.type, { command: approve.command.command, arguments: approve.command.arguments });
  check(res.ok && res.status === 'approved' && res.message.includes('human:e2e'), 'approve ran as human:e2e: ' + res.message);
  await until('inlay hint refresh', () => refreshes > before);
  check(true, 'server asked for workspace/inlayHint/refresh');
  hs = await hints();
  check(hs.some((h) => labelOf(h).startsWith('+ “' + TRIGGER + '”')), 'the approved trigger is now a memory-derived hint');

  const prompt = await conn.sendRequest('agent-ls/composedPrompt', { uri });
  check(prompt.text.includes('- ' + TRIGGER), 'agent-ls/composedPrompt renders the approved trigger');

  let refused = null;
  try {
    await conn.sendRequest(lsp.ExecuteCommandRequest.type, { command: approve.command.command, arguments: approve.command.arguments });
  } catch (e) {
    refused = e;
  }
  check(refused && /approved/.test(refused.message), 'a second approval is refused with the gate reason');

  await conn.sendRequest(lsp.ShutdownRequest.type);
  await conn.sendNotification(lsp.ExitNotification.type);
  const code = await exited;
  check(code === 0, 'server exited 0 after shutdown/exit (got ' + code + ')');
  clearTimeout(failsafe);
  conn.dispose();
}

main().catch((e) => {
  console.error(stderr);
  fail(e && e.stack ? e.stack : String(e));
});
