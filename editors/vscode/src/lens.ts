// The evolution lens from the editor: `agent-ls lens` started as a child
// process prints the page's URL (with its access token) as its first line;
// the extension opens it in the browser. These helpers are pure or use only
// Node streams, so they are tested without VS Code.
import type { Readable } from "node:stream";
import { serverExecutable, type PathContext, type ServerExecutable, type Settings } from "./settings";

/** The command line that starts the lens for the settings' binary and store. */
export function lensExecutable(s: Settings, ctx: PathContext = {}): ServerExecutable {
  const { command } = serverExecutable(s, ctx);
  const args = ["lens"];
  if (s.storePath !== "") {
    args.push("--store", s.storePath);
  }
  return { command, args };
}

/**
 * The lens URL in the first line the lens printed, or undefined when the line
 * is not one: http on a loopback host with a port, carrying the token.
 */
export function parseLensUrl(line: string): string | undefined {
  let u: URL;
  try {
    u = new URL(line.trim());
  } catch {
    return undefined;
  }
  const loopback = u.hostname === "127.0.0.1" || u.hostname === "[::1]" || u.hostname === "localhost";
  if (u.protocol !== "http:" || !loopback || u.port === "" || !u.searchParams.get("token")) {
    return undefined;
  }
  return u.toString();
}

/**
 * Reads the first line of a stream (the lens's stdout): it resolves with the
 * line, or rejects when the stream ends first or after timeoutMs.
 */
export function firstLine(stream: Readable, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = "";
    const done = (err: Error | undefined, line?: string): void => {
      clearTimeout(timer);
      stream.off("data", onData);
      stream.off("end", onEnd);
      stream.off("error", onError);
      if (err !== undefined) {
        reject(err);
      } else {
        resolve(line ?? "");
      }
    };
    const onData = (chunk: Buffer | string): void => {
      buf += chunk.toString();
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        done(undefined, buf.slice(0, nl));
      }
    };
    const onEnd = (): void => {
      done(new Error("agent-ls lens exited before printing its URL"));
    };
    const onError = (err: Error): void => {
      done(err);
    };
    const timer = setTimeout(() => {
      done(new Error(`agent-ls lens printed no URL within ${timeoutMs} ms`));
    }, timeoutMs);
    stream.on("data", onData);
    stream.on("end", onEnd);
    stream.on("error", onError);
  });
}
