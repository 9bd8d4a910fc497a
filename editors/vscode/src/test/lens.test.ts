import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { firstLine, lensExecutable, parseLensUrl } from "../lens";
import type { Settings } from "../settings";

const base: Settings = { serverPath: "agent-ls", storePath: "", scope: {}, actor: "", trace: "off" };

describe("lensExecutable", () => {
  it("runs the configured binary's lens command, with the store when set", () => {
    assert.deepEqual(lensExecutable(base), { command: "agent-ls", args: ["lens"] });
    assert.deepEqual(lensExecutable({ ...base, serverPath: "./bin/agent-ls", storePath: "mem.db" }, { workspaceRoot: "/ws" }), {
      command: "/ws/bin/agent-ls",
      args: ["lens", "--store", "mem.db"],
    });
  });
});

describe("parseLensUrl", () => {
  const cases: { line: string; want: string | undefined }[] = [
    { line: "http://127.0.0.1:43123/?token=abc\n", want: "http://127.0.0.1:43123/?token=abc" },
    { line: "http://[::1]:8080/?token=abc", want: "http://[::1]:8080/?token=abc" },
    { line: "http://localhost:8080/?token=abc", want: "http://localhost:8080/?token=abc" },
    { line: "http://127.0.0.1:43123/", want: undefined },
    { line: "http://example.com:80/?token=abc", want: undefined },
    { line: "https://127.0.0.1:1/?token=abc", want: undefined },
    { line: "agent-ls lens: --addr refused", want: undefined },
    { line: "", want: undefined },
  ];
  for (const c of cases) {
    it(JSON.stringify(c.line), () => {
      assert.equal(parseLensUrl(c.line), c.want);
    });
  }
});

describe("firstLine", () => {
  it("reads the first line a child prints", async () => {
    const p = spawn(process.execPath, ["-e", "console.log('http://127.0.0.1:1/?token=x'); setTimeout(() => {}, 200)"]);
    assert.equal(await firstLine(p.stdout, 10000), "http://127.0.0.1:1/?token=x");
    p.kill();
  });
  it("rejects when the child exits first", async () => {
    const p = spawn(process.execPath, ["-e", "process.stdout.write('no newline')"]);
    await assert.rejects(firstLine(p.stdout, 10000), /exited before printing its URL/);
  });
});

// Against the real `agent-ls lens` (AGENT_LS_BIN, as server.test.ts): the
// command the extension runs prints a URL parseLensUrl accepts, the page
// refuses a request without the token, and SIGTERM ends it with exit 0.
const bin = process.env.AGENT_LS_BIN ?? "";
const skip = bin === "" && process.env.CI !== "true" ? "AGENT_LS_BIN is not set" : false;

describe("against agent-ls lens", { skip }, () => {
  it("prints its URL first, guards it with the token and stops on SIGTERM", async () => {
    assert.notEqual(bin, "", "AGENT_LS_BIN must name the agent-ls binary under CI");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ls-lens-"));
    const exe = lensExecutable({ ...base, serverPath: bin });
    const p = spawn(exe.command, exe.args, { cwd: dir, stdio: ["ignore", "pipe", "inherit"] });
    try {
      const url = parseLensUrl(await firstLine(p.stdout, 15000));
      assert.ok(url !== undefined, "the first line is not a lens URL");
      const res = await fetch(new URL("/", url));
      assert.equal(res.status, 401);
      const exited = new Promise<number | null>((resolve) => p.once("exit", resolve));
      p.kill("SIGTERM");
      assert.equal(await exited, 0);
    } finally {
      p.kill();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
