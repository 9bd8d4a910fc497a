// The VS Code client of `agent-ls serve`: starts the server over stdio for
// agent files, shows the composed prompt, learnings and pending reviews, and
// reports the store's state in the status bar. The logic it relies on lives in
// pure modules (settings, render, status, files) that are unit-tested without VS Code.
import { spawn, type ChildProcess } from "node:child_process";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";
import { CommandIds, type CommandId } from "./commands";
import { agentFileGlob, documentSelector, isAgentFile } from "./files";
import { firstLine, lensExecutable, parseLensUrl } from "./lens";
import {
  Methods,
  ServerCommands,
  type CommandResult,
  type ComposedPromptParams,
  type ComposedPromptResult,
  type LearningsResult,
  type ProposalsResult,
  type StatusParams,
} from "./protocol";
import { proposalItems, renderComposedPrompt, renderLearnings, renderProposal, validateSince } from "./render";
import {
  configSection,
  needsRestart,
  readSettings,
  serverExecutable,
  toInitializationOptions,
  type Settings,
} from "./settings";
import { StatusTracker, statusView } from "./status";

/** URI scheme of the read-only documents (composed prompt, learnings, proposals). */
export const promptScheme = "agent-ls-prompt";

/** Serves the read-only documents the commands open; content is set before a document is opened. */
class ReadOnlyDocuments implements vscode.TextDocumentContentProvider {
  private readonly contents = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  /** 0-based memory-derived lines per document, for the decoration. */
  readonly memoryLines = new Map<string, number[]>();

  set(uri: vscode.Uri, text: string, memoryLines: number[] = []): void {
    const key = uri.toString();
    const existed = this.contents.has(key);
    this.contents.set(key, text);
    this.memoryLines.set(key, memoryLines);
    if (existed) {
      this.changed.fire(uri);
    }
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? "";
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** The running extension: one language client at a time, restarted on demand. */
class AgentLsExtension implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private settings: Settings;
  private readonly output: vscode.OutputChannel;
  private readonly docs = new ReadOnlyDocuments();
  private readonly tracker = new StatusTracker();
  private readonly statusItem: vscode.StatusBarItem;
  private readonly memoryDecoration: vscode.TextEditorDecorationType;
  private readonly disposables: { dispose(): unknown }[] = [];
  /** The running `agent-ls lens` and its URL, while it runs. */
  private lens: { proc: ChildProcess; url: string } | undefined;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel("Agent LS");
    this.statusItem = vscode.window.createStatusBarItem("agentLs.status", vscode.StatusBarAlignment.Left, 10);
    this.statusItem.name = "Agent LS";
    this.statusItem.command = CommandIds.showPendingReviews;
    this.memoryDecoration = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor("diffEditor.insertedLineBackground"),
      overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.addedForeground"),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
    });
    this.settings = this.loadSettings();
  }

  async activate(): Promise<void> {
    const handlers: Record<CommandId, () => Promise<void>> = {
      [CommandIds.showComposedPrompt]: () => this.showComposedPrompt(undefined),
      [CommandIds.showLearnings]: () => this.showLearnings(),
      [CommandIds.showPendingReviews]: () => this.showPendingReviews(),
      [CommandIds.restartServer]: () => this.restart(),
      [CommandIds.openLens]: () => this.openLens(),
    };
    for (const [id, handler] of Object.entries(handlers)) {
      this.disposables.push(vscode.commands.registerCommand(id, () => this.guard(handler)));
    }
    this.disposables.push(
      this.output,
      this.statusItem,
      this.memoryDecoration,
      this.docs,
      vscode.workspace.registerTextDocumentContentProvider(promptScheme, this.docs),
      vscode.window.onDidChangeActiveTextEditor(() => {
        this.refreshStatus();
      }),
      vscode.window.onDidChangeVisibleTextEditors((editors) => {
        this.decorate(editors);
      }),
      vscode.workspace.onDidCloseTextDocument((d) => {
        this.tracker.forget(d.uri.toString());
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(configSection)) {
          const before = this.settings;
          this.settings = this.loadSettings();
          if (needsRestart(before, this.settings)) {
            void this.guard(() => this.restart());
          }
        }
      }),
    );
    this.context.subscriptions.push(this);
    await this.start();
  }

  private loadSettings(): Settings {
    const config = vscode.workspace.getConfiguration(configSection);
    const { settings, problems } = readSettings((key) => config.get(key));
    for (const p of problems) {
      this.output.appendLine(`settings: ${p}`);
      void vscode.window.showWarningMessage(`Agent LS: ${p}`);
    }
    return settings;
  }

  private workspaceRoot(): string | undefined {
    return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  }

  private async start(): Promise<void> {
    const exe = serverExecutable(this.settings, { workspaceRoot: this.workspaceRoot(), home: os.homedir() });
    // No `transport`: vscode-languageclient would append --stdio; `serve` speaks stdio as is.
    const serverOptions: ServerOptions = { command: exe.command, args: exe.args, options: { cwd: this.workspaceRoot() } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: documentSelector.map((f) => ({ ...f })),
      initializationOptions: toInitializationOptions(this.settings),
      outputChannel: this.output,
      middleware: {
        executeCommand: async (command, args, next) => {
          // The server's showComposedPrompt is a client-side convenience: open the view.
          if (command === ServerCommands.showComposedPrompt) {
            const arg: unknown = args[0];
            const uri = isUriArg(arg) ? vscode.Uri.parse(arg.uri) : undefined;
            await this.showComposedPrompt(uri);
            return undefined;
          }
          const result: unknown = await next(command, args);
          return result;
        },
      },
    };
    const client = new LanguageClient("agentLs", "Agent LS", serverOptions, clientOptions);
    this.client = client;
    this.tracker.clear();
    this.refreshStatus();
    this.disposables.push(
      client.onNotification(Methods.status, (p: StatusParams) => {
        this.tracker.update(p.uri ? { ...p, uri: vscode.Uri.parse(p.uri).toString() } : p);
        this.refreshStatus();
      }),
    );
    try {
      await client.start();
    } catch (err) {
      this.output.appendLine(`start ${exe.command} ${exe.args.join(" ")}: ${errorMessage(err)}`);
      void vscode.window.showErrorMessage(
        `Agent LS: could not start "${exe.command} serve" (${errorMessage(err)}). Set agentLs.serverPath to the agent-ls binary.`,
      );
    }
  }

  private async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) {
      try {
        await client.stop();
      } catch (err) {
        this.output.appendLine(`stop: ${errorMessage(err)}`);
      }
      await client.dispose().catch(() => undefined);
    }
  }

  private async restart(): Promise<void> {
    await this.stop();
    this.settings = this.loadSettings();
    await this.start();
  }

  private runningClient(): LanguageClient {
    const c = this.client;
    if (c === undefined || !c.isRunning()) {
      throw new Error("the agent-ls server is not running (see the Agent LS output, or run Agent LS: Restart server)");
    }
    return c;
  }

  private async guard(f: () => Promise<void>): Promise<void> {
    try {
      await f();
    } catch (err) {
      this.output.appendLine(errorMessage(err));
      void vscode.window.showErrorMessage(`Agent LS: ${errorMessage(err)}`);
    }
  }

  /** The agent file a command is about: the active one, the only one, or one the user picks. */
  private async pickAgentFile(): Promise<vscode.Uri | undefined> {
    const active = vscode.window.activeTextEditor?.document.uri;
    if (active !== undefined && isAgentFile(active.path)) {
      return active;
    }
    const found = await vscode.workspace.findFiles(agentFileGlob, "**/node_modules/**", 200);
    if (found.length === 0) {
      throw new Error("no agent file (*.agent.yaml, *.agent.yml, *.agent.json) is open or in the workspace");
    }
    if (found.length === 1) {
      return found[0];
    }
    const pick = await vscode.window.showQuickPick(
      found.map((u) => ({ label: path.basename(u.fsPath), description: vscode.workspace.asRelativePath(u), uri: u })),
      { placeHolder: "Agent file" },
    );
    return pick?.uri;
  }

  private async openReadOnly(name: string, source: vscode.Uri, text: string, memoryLines: number[] = []): Promise<void> {
    const uri = vscode.Uri.from({ scheme: promptScheme, path: `/${name}`, query: source.toString() });
    this.docs.set(uri, text, memoryLines);
    const doc = await vscode.workspace.openTextDocument(uri);
    const editor = await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside });
    this.decorate([editor]);
  }

  private decorate(editors: readonly vscode.TextEditor[]): void {
    for (const e of editors) {
      if (e.document.uri.scheme !== promptScheme) {
        continue;
      }
      const lines = this.docs.memoryLines.get(e.document.uri.toString()) ?? [];
      e.setDecorations(
        this.memoryDecoration,
        lines.filter((l) => l < e.document.lineCount).map((l) => e.document.lineAt(l).range),
      );
    }
  }

  private async showComposedPrompt(target: vscode.Uri | undefined): Promise<void> {
    const client = this.runningClient();
    const uri = target ?? (await this.pickAgentFile());
    if (uri === undefined) {
      return;
    }
    const params: ComposedPromptParams = { uri: uri.toString() };
    const res = await client.sendRequest<ComposedPromptResult>(Methods.composedPrompt, params);
    const base = path.basename(uri.path);
    const r = renderComposedPrompt(res, base);
    // Not *.prompt.md: VS Code opens that name as a Copilot prompt file (with a Run button).
    await this.openReadOnly(`${base} (composed).md`, uri, r.markdown, r.memoryLines);
  }

  private async showLearnings(): Promise<void> {
    const client = this.runningClient();
    const uri = await this.pickAgentFile();
    if (uri === undefined) {
      return;
    }
    const since = await vscode.window.showInputBox({
      title: "Agent LS: Show learnings since…",
      prompt: "A duration back from now (7d, 2w, 36h) or an RFC 3339 time",
      value: "7d",
      validateInput: (v) => validateSince(v),
    });
    if (since === undefined) {
      return;
    }
    const res = await client.sendRequest<LearningsResult>(Methods.learnings, {
      uri: uri.toString(),
      since: since.trim(),
    });
    const base = path.basename(uri.path);
    await this.openReadOnly(`${base}.learnings.md`, uri, renderLearnings(res.learnings ?? [], since.trim(), base));
  }

  private async showPendingReviews(): Promise<void> {
    const client = this.runningClient();
    const uri = await this.pickAgentFile();
    if (uri === undefined) {
      return;
    }
    const res = await client.sendRequest<ProposalsResult>(Methods.proposals, { uri: uri.toString() });
    const items = proposalItems(res.proposals ?? [], new Date());
    if (items.length === 0) {
      void vscode.window.showInformationMessage(`Agent LS: no pending reviews for ${path.basename(uri.path)}`);
      return;
    }
    const picked = await vscode.window.showQuickPick(items, {
      title: `Pending reviews of ${path.basename(uri.path)}`,
      placeHolder: "Pick a proposal to review its composition diff",
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (picked === undefined) {
      return;
    }
    const p = picked.proposal;
    await this.openReadOnly(`${p.id}.proposal.md`, uri, renderProposal(p));
    const action = await vscode.window.showQuickPick(
      [
        { label: "$(check) Approve", action: "approve" as const },
        { label: "$(close) Reject…", action: "reject" as const },
        { label: "Decide later", action: "later" as const },
      ],
      { title: `${p.kind} ${p.recordId}`, placeHolder: "Approve or reject this proposal", ignoreFocusOut: true },
    );
    if (action === undefined || action.action === "later") {
      return;
    }
    let result: CommandResult;
    if (action.action === "approve") {
      result = await this.execute(ServerCommands.approve, { proposalId: p.id, uri: uri.toString() });
    } else {
      const reason = await vscode.window.showInputBox({
        title: `Reject ${p.id}`,
        prompt: "Why is this proposal rejected? (recorded in the ledger)",
        ignoreFocusOut: true,
        validateInput: (v) => (v.trim() === "" ? "a reason is required" : undefined),
      });
      if (reason === undefined) {
        return;
      }
      result = await this.execute(ServerCommands.reject, {
        proposalId: p.id,
        reason: reason.trim(),
        uri: uri.toString(),
      });
    }
    void vscode.window.showInformationMessage(`Agent LS: ${result.message || (result.ok ? "done" : "not done")}`);
  }

  private async execute(command: string, args: object): Promise<CommandResult> {
    const res: unknown = await this.runningClient().sendRequest(ExecuteCommandRequest.type, {
      command,
      arguments: [args],
    });
    if (typeof res === "object" && res !== null && "ok" in res) {
      return res as CommandResult;
    }
    return { ok: true, message: `${command} done` };
  }

  private refreshStatus(): void {
    const doc = vscode.window.activeTextEditor?.document;
    if (doc === undefined || !(isAgentFile(doc.uri.path) || doc.uri.scheme === promptScheme)) {
      this.statusItem.hide();
      return;
    }
    const key = doc.uri.scheme === promptScheme ? vscode.Uri.parse(doc.uri.query).toString() : doc.uri.toString();
    const view = statusView(this.tracker.statusFor(key));
    this.statusItem.text = view.text;
    this.statusItem.tooltip = view.tooltip;
    this.statusItem.backgroundColor =
      view.severity === undefined ? undefined : new vscode.ThemeColor(`statusBarItem.${view.severity}Background`);
    this.statusItem.show();
  }

  /**
   * Agent LS: Open evolution lens. Starts `agent-ls lens` for the workspace
   * (once; later runs reopen the same page), reads the URL it prints first and
   * opens it in the browser.
   */
  private async openLens(): Promise<void> {
    if (this.lens === undefined || this.lens.proc.exitCode !== null || this.lens.proc.signalCode !== null) {
      const exe = lensExecutable(this.settings, { workspaceRoot: this.workspaceRoot(), home: os.homedir() });
      const proc = spawn(exe.command, exe.args, { cwd: this.workspaceRoot(), stdio: ["ignore", "pipe", "pipe"] });
      proc.stderr.on("data", (chunk: Buffer) => {
        this.output.append(`lens: ${chunk.toString()}`);
      });
      const started = new Promise<never>((_, reject) => {
        proc.once("error", (err) => {
          reject(new Error(`could not start "${exe.command} lens" (${err.message}); set agentLs.serverPath to the agent-ls binary`));
        });
      });
      let line: string;
      try {
        line = await Promise.race([firstLine(proc.stdout, 15000), started]);
      } catch (err) {
        proc.kill();
        throw err;
      }
      const url = parseLensUrl(line);
      if (url === undefined) {
        proc.kill();
        throw new Error(`agent-ls lens printed no URL (first line: ${JSON.stringify(line)})`);
      }
      proc.stdout.resume();
      proc.once("exit", (code) => {
        this.output.appendLine(`lens: exited (${String(code)})`);
      });
      this.lens = { proc, url };
      this.output.appendLine(`lens: ${url.replace(/token=[^&]*/, "token=…")}`);
    }
    const external = await vscode.env.asExternalUri(vscode.Uri.parse(this.lens.url, true));
    if (!(await vscode.env.openExternal(external))) {
      throw new Error("the browser did not open the lens");
    }
  }

  /** Stops the server and releases everything; safe to call twice. */
  async shutdown(): Promise<void> {
    this.lens?.proc.kill("SIGTERM");
    this.lens = undefined;
    await this.stop();
    for (const d of this.disposables.splice(0)) {
      d.dispose();
    }
  }

  dispose(): void {
    void this.shutdown();
  }
}

function isUriArg(v: unknown): v is { uri: string } {
  return typeof v === "object" && v !== null && typeof (v as { uri?: unknown }).uri === "string";
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

let extension: AgentLsExtension | undefined;

/** Called by VS Code on the first activation event. */
export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extension = new AgentLsExtension(context);
  await extension.activate();
}

/** Called by VS Code on shutdown; stops the server. */
export async function deactivate(): Promise<void> {
  const e = extension;
  extension = undefined;
  await e?.shutdown();
}
