// The bridge's MCP Unix socket in its state dir, for the stdio relay on the same host or container
// (`urlbridge mcp --session`, server/cli/mcp-relay.ts). Only the bridge's user can connect (state dir 0700, socket
// 0600); agent commands run as another user when the bridge is root (docs/SECURITY.md). The SDK loads on the first
// connection, not at start-up; each connection is served by socket-connection.ts.
import net from "node:net";
import { ownSocketFile, removeSocketFile, removeSocketFileIfOurs, socketFileKind } from "../edge/socket-file.js";
import type { Logger } from "../log.js";
import type { McpSocketDeps } from "./socket-connection.js";
import { mcpSocketPath } from "./socket-protocol.js";

export interface McpSocketListener {
  /** Where it listens; undefined when it does not (the relay then uses HTTP). */
  path: string | undefined;
  close(): Promise<void>;
}

/** How long the start-up probe of a leftover socket file waits for an answer. */
const PROBE_TIMEOUT_MS = 1000;

/** Whether something answers on `file`: another bridge on the same state dir, whose socket must not be taken. */
function answers(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(file);
    const done = (alive: boolean) => {
      clearTimeout(timer);
      probe.destroy();
      resolve(alive);
    };
    const timer = setTimeout(() => done(true), PROBE_TIMEOUT_MS);
    probe.once("connect", () => done(true));
    probe.once("error", () => done(false));
  });
}

/** Removes a socket file a killed bridge left behind; false when the path is taken by something else. */
async function clearLeftover(file: string, log: Logger): Promise<boolean> {
  const kind = socketFileKind(file);
  if (kind === "absent") return true;
  if (kind === "other") {
    log.warn(
      `${file} exists and is not a socket; \`urlbridge mcp\` relays over HTTP instead (remove the file and restart to use the socket)`,
    );
    return false;
  }
  if (await answers(file)) {
    log.warn(
      `another process answers on ${file} (a second bridge on this state dir?); \`urlbridge mcp\` relays over HTTP to this one`,
    );
    return false;
  }
  removeSocketFile(file);
  return true;
}

export async function listenMcpSocket(stateDir: string, deps: McpSocketDeps): Promise<McpSocketListener> {
  const file = mcpSocketPath(stateDir);
  if (!file) {
    deps.log.info("the state dir's path is too long for a Unix socket; `urlbridge mcp` relays over HTTP");
    return { path: undefined, close: async () => {} };
  }
  if (!(await clearLeftover(file, deps.log))) return { path: undefined, close: async () => {} };
  let serve: Promise<typeof import("./socket-connection.js")> | undefined;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    serve ??= import("./socket-connection.js");
    serve
      .then((m) => m.serveMcpSocketConnection(deps, socket))
      .catch((error: unknown) => {
        serve = undefined;
        deps.log.error("MCP socket connection failed", { error: error instanceof Error ? error.stack : String(error) });
        socket.destroy();
      });
  });
  let ino: number;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(file, () => {
        server.off("error", reject);
        resolve();
      });
    });
    // Bound with the umask's mode (0755 by default: connecting needs write, so only the owner could already).
    ino = ownSocketFile(file);
  } catch (error) {
    server.close();
    deps.log.warn(
      `cannot listen on ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)}); \`urlbridge mcp\` relays over HTTP`,
    );
    return { path: undefined, close: async () => {} };
  }
  return {
    path: file,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        // Only our own file: a later bridge may have bound the path meanwhile.
        removeSocketFileIfOurs(file, ino);
      }),
  };
}
