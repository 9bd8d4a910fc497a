// Test doubles for the `vscode` and `vscode-languageclient/node` modules, just
// wide enough to activate the extension and drive its commands in plain node.
// install() routes require() of those two names to the doubles.
import Module from "node:module";

type Listener<T> = (v: T) => unknown;

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  readonly event = (l: Listener<T>): { dispose(): void } => {
    this.listeners.push(l);
    return { dispose: () => (this.listeners = this.listeners.filter((x) => x !== l)) };
  };
  fire(v: T): void {
    for (const l of this.listeners) {
      l(v);
    }
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class Uri {
  constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query: string,
  ) {}
  static parse(s: string): Uri {
    const m = /^([a-zA-Z][\w+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?/.exec(s);
    if (m === null) {
      throw new Error(`bad uri ${s}`);
    }
    return new Uri(m[1] ?? "", m[2] ?? "", m[3] ?? "", m[4] ?? "");
  }
  static file(p: string): Uri {
    return new Uri("file", "", p, "");
  }
  static from(c: { scheme: string; path?: string; query?: string }): Uri {
    return new Uri(c.scheme, "", c.path ?? "", c.query ?? "");
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    const auth = this.scheme === "file" || this.authority !== "" ? `//${this.authority}` : "";
    return `${this.scheme}:${auth}${this.path}${this.query ? "?" + this.query : ""}`;
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export interface FakeDocument {
  uri: Uri;
  text: string;
  lineCount: number;
  lineAt(i: number): { range: { line: number } };
}

export interface FakeEditor {
  document: FakeDocument;
  decorations: { line: number }[][];
  setDecorations(type: unknown, ranges: { line: number }[]): void;
}

export function fakeDocument(uri: Uri, text = ""): FakeDocument {
  const lines = text.split("\n");
  return { uri, text, lineCount: lines.length, lineAt: (i) => ({ range: { line: i } }) };
}

function fakeEditor(document: FakeDocument): FakeEditor {
  const e: FakeEditor = {
    document,
    decorations: [],
    setDecorations(_type, ranges) {
      e.decorations.push(ranges);
    },
  };
  return e;
}

interface ContentProvider {
  provideTextDocumentContent(uri: Uri): string;
}

/** A quick-pick answer: picks one of the offered items (or undefined to cancel). */
export type PickScript = (items: readonly Record<string, unknown>[]) => Record<string, unknown> | undefined;
/** An input-box answer; gets the options to check validateInput. */
export type InputScript = (opts: { validateInput?: (v: string) => string | undefined; value?: string }) => string | undefined;

/** Everything the doubles record and the scripted answers they give. */
export class World {
  config: Record<string, unknown> = {};
  commands = new Map<string, (...args: unknown[]) => unknown>();
  providers = new Map<string, ContentProvider>();
  messages: { level: "info" | "warning" | "error"; text: string }[] = [];
  output: string[] = [];
  shown: FakeEditor[] = [];
  picks: PickScript[] = [];
  inputs: InputScript[] = [];
  files: Uri[] = [];
  activeTextEditor: FakeEditor | undefined;
  statusItem: Record<string, unknown> & { visible: boolean } = { visible: false };
  readonly activeChanged = new EventEmitter<unknown>();
  readonly visibleChanged = new EventEmitter<readonly FakeEditor[]>();
  readonly docClosed = new EventEmitter<FakeDocument>();
  readonly configChanged = new EventEmitter<{ affectsConfiguration(s: string): boolean }>();
  clients: FakeLanguageClient[] = [];
  responder: (method: string, params: unknown) => unknown = () => null;
  startError: Error | undefined;

  setActive(uri: Uri): void {
    this.activeTextEditor = fakeEditor(fakeDocument(uri));
    this.activeChanged.fire(this.activeTextEditor);
  }

  changeConfig(values: Record<string, unknown>): void {
    this.config = { ...this.config, ...values };
    this.configChanged.fire({ affectsConfiguration: (s) => s === "agentLs" });
  }

  get client(): FakeLanguageClient {
    const c = this.clients[this.clients.length - 1];
    if (c === undefined) {
      throw new Error("no LanguageClient was created");
    }
    return c;
  }

  vscode(): Record<string, unknown> {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const w = this;
    return {
      Uri,
      EventEmitter,
      ThemeColor,
      StatusBarAlignment: { Left: 1, Right: 2 },
      OverviewRulerLane: { Left: 1 },
      ViewColumn: { Beside: -2 },
      commands: {
        registerCommand(id: string, f: (...args: unknown[]) => unknown) {
          if (w.commands.has(id)) {
            throw new Error(`command ${id} already exists`);
          }
          w.commands.set(id, f);
          return { dispose: () => w.commands.delete(id) };
        },
      },
      window: {
        get activeTextEditor() {
          return w.activeTextEditor;
        },
        createOutputChannel: () => ({
          appendLine: (s: string) => w.output.push(s),
          append: (s: string) => w.output.push(s),
          dispose: () => undefined,
        }),
        createStatusBarItem: () => {
          const item = {
            visible: false,
            show: () => (item.visible = true),
            hide: () => (item.visible = false),
            dispose: () => undefined,
          };
          w.statusItem = item;
          return item;
        },
        createTextEditorDecorationType: () => ({ dispose: () => undefined }),
        onDidChangeActiveTextEditor: w.activeChanged.event,
        onDidChangeVisibleTextEditors: w.visibleChanged.event,
        showInformationMessage: (text: string) => w.messages.push({ level: "info", text }),
        showWarningMessage: (text: string) => w.messages.push({ level: "warning", text }),
        showErrorMessage: (text: string) => w.messages.push({ level: "error", text }),
        showQuickPick: async (items: readonly Record<string, unknown>[]) => {
          const script = w.picks.shift();
          if (script === undefined) {
            throw new Error("unexpected showQuickPick");
          }
          return Promise.resolve(script(await Promise.resolve(items)));
        },
        showInputBox: (opts: Parameters<InputScript>[0]) => {
          const script = w.inputs.shift();
          if (script === undefined) {
            throw new Error("unexpected showInputBox");
          }
          return Promise.resolve(script(opts));
        },
        showTextDocument: (doc: FakeDocument) => {
          const e = fakeEditor(doc);
          w.shown.push(e);
          return Promise.resolve(e);
        },
      },
      workspace: {
        workspaceFolders: [{ uri: Uri.file("/ws") }],
        getConfiguration: () => ({ get: (key: string) => w.config[key] }),
        registerTextDocumentContentProvider(scheme: string, p: ContentProvider) {
          w.providers.set(scheme, p);
          return { dispose: () => w.providers.delete(scheme) };
        },
        onDidCloseTextDocument: w.docClosed.event,
        onDidChangeConfiguration: w.configChanged.event,
        findFiles: () => Promise.resolve(w.files),
        asRelativePath: (u: Uri) => u.path,
        openTextDocument: (uri: Uri) => {
          const p = w.providers.get(uri.scheme);
          if (p === undefined) {
            return Promise.reject(new Error(`no provider for ${uri.scheme}`));
          }
          return Promise.resolve(fakeDocument(uri, p.provideTextDocumentContent(uri)));
        },
      },
    };
  }

  languageClientModule(): Record<string, unknown> {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const w = this;
    class LanguageClient extends FakeLanguageClient {
      constructor(id: string, name: string, serverOptions: unknown, clientOptions: Record<string, unknown>) {
        super(w, id, name, serverOptions, clientOptions);
        w.clients.push(this);
      }
    }
    return { LanguageClient, ExecuteCommandRequest: { type: { method: "workspace/executeCommand" } } };
  }
}

export class FakeLanguageClient {
  running = false;
  stopped = false;
  requests: { method: string; params: unknown }[] = [];
  notificationHandlers = new Map<string, (p: unknown) => void>();

  constructor(
    private readonly world: World,
    readonly id: string,
    readonly name: string,
    readonly serverOptions: unknown,
    readonly clientOptions: Record<string, unknown>,
  ) {}

  start(): Promise<void> {
    if (this.world.startError) {
      return Promise.reject(this.world.startError);
    }
    this.running = true;
    return Promise.resolve();
  }
  stop(): Promise<void> {
    this.running = false;
    this.stopped = true;
    return Promise.resolve();
  }
  dispose(): Promise<void> {
    return Promise.resolve();
  }
  isRunning(): boolean {
    return this.running;
  }
  onNotification(method: string, h: (p: unknown) => void): { dispose(): void } {
    this.notificationHandlers.set(method, h);
    return { dispose: () => this.notificationHandlers.delete(method) };
  }
  notify(method: string, params: unknown): void {
    const h = this.notificationHandlers.get(method);
    if (h === undefined) {
      throw new Error(`no handler for ${method}`);
    }
    h(params);
  }
  sendRequest(type: string | { method: string }, params: unknown): Promise<unknown> {
    const method = typeof type === "string" ? type : type.method;
    this.requests.push({ method, params });
    try {
      return Promise.resolve(this.world.responder(method, params));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }
}

type Loader = (request: string, parent: unknown, isMain: boolean) => unknown;

/** Routes require("vscode") and require("vscode-languageclient/node") to the world's doubles. */
export function install(world: () => World): () => void {
  const M = Module as unknown as { _load: Loader };
  const orig = M._load;
  M._load = function (this: unknown, request, parent, isMain) {
    if (request === "vscode") {
      return world().vscode();
    }
    if (request === "vscode-languageclient/node") {
      return world().languageClientModule();
    }
    return orig.call(this, request, parent, isMain);
  };
  return () => {
    M._load = orig;
  };
}
