// Wires one bridge: store, registry, public origin, both planes, and their HTTP servers.
// main.ts runs it as a process; integration tests start it in-process on port 0.
import { setMaxListeners } from "node:events";
import http from "node:http";
import path from "node:path";
import type { Config } from "./config.js";
import { createControlPlaneApp } from "./control/app.js";
import { startCloudflaredQuickTunnel } from "./tunnel/cloudflared-process.js";
import { loadOperatorCredential } from "./control/operator-token.js";
import { createPublicOrigin } from "./tunnel/public-origin.js";
import { describeReachability } from "./tunnel/reachability.js";
import { runningInAppliance } from "./control/session-mcp.js";
import { operatorCommand } from "./cli/invocation.js";
import { createRegistry, type Permissions } from "./control/registry.js";
import { createWorktreeSessions } from "./control/worktrees/worktree-sessions.js";
import { isToolEnabled, mutationEnabled } from "./kernel/tool/permissions.js";
import { listedSpecs, MCP_TOOL_SPECS } from "./mcp/tool-listing.js";
import { pluginSpecs, pluginToolName } from "./mcp/tools/plugins.js";
import { createActivityRecorder } from "./edge/activity-recorder.js";
import { createOperatorReview } from "./edge/operator-review.js";
import { createDataPlane } from "./gateway/app.js";
import { createUnknownTokenThrottle, NO_UNKNOWN_TOKEN_THROTTLE } from "./gateway/unknown-token-throttle.js";
import { createAuthenticator } from "./gateway/authenticate.js";
import { createClientErrorHandler } from "./gateway/client-error.js";
import { createDataPlaneShell } from "./gateway/koa-shell.js";
import { createReadTools } from "./kernel/index.js";
import { createWebTools, type WebToolsOptions } from "./kernel/web/index.js";
import { parseWebAllowlist } from "./kernel/web/guard/allowlist.js";
import { createToolKernel, type ToolKernel } from "./tool/run-tool.js";
import { SessionStates } from "./kernel/tool/session-state.js";
import type { AnyToolDefinition } from "./kernel/tool/definition.js";
import { createLogger, type Logger } from "./log.js";
import {
  afterListening,
  closeServer,
  dataPlaneLine,
  hostForUrl,
  koaListener,
  listen,
  listenAll,
  resolveListenAddresses,
} from "./listeners.js";
import { listenMcpSocket } from "./mcp/socket-listener.js";
import { warmMcp } from "./mcp/warm.js";
import {
  createMutationRuntime,
  createMutationTools,
  readTestHooks,
  recoverInterruptedIntents,
  resolveStagedContent,
  SHUTDOWN_DRAIN_MS,
} from "./mutation/index.js";
import { createTerminalState, type TerminalState } from "./mutation/terminal/terminal-state.js";
import { ptyLimits } from "./mutation/terminal/pty/pty-limits.js";
import { buildId, PACKAGE_ROOT, packageVersion } from "./package-info.js";
import { createPluginHost, type Plugin } from "./plugins/host.js";
import { createSandbox, probeLauncher, probeLauncherInBackground } from "./sandbox/launcher.js";
import { agentLimitsStatus, lowerOwnOomScore } from "./sandbox/agent-limits.js";
import { ownerIdentityOf } from "./sandbox/identity.js";
import { containerSandboxStatus } from "./sandbox/container/status.js";
import { setSpawnerLog, useSpawner } from "./sandbox/spawner.js";
import { newerMigrations } from "./store/database.js";
import { openStore, type Store } from "./store/index.js";
import { workerEntry } from "./kernel/worker/worker-entry.js";
import { sandboxInstanceOf } from "./store/sandbox-instance.js";
import { DATA_PLANE_MAX_HEADER_BYTES } from "./url-grammar/limits.js";

// cli.ts's `version` imports it from here: that dynamic import of bridge.js is what makes the bundle's shared chunk
// (bridge-*.js, which the code cache covers; scripts/vite.server.config.ts) rather than folding it into main.js.
export { packageVersion };

export interface BridgeOptions {
  log?: Logger;
  plugins?: Plugin[];
  /** Extra tools (tests, plugins under development). */
  extraTools?: AnyToolDefinition[];
  /** The mutation runtime's clock (journal retention, staging TTL); tests inject one. */
  now?: () => number;
  /** The web tools' process boundaries: a test injects a DNS stand-in (resolve) or the interfaces it sees. */
  web?: Pick<WebToolsOptions, "resolve" | "interfaces">;
  /** MCP's foreground bound (server/mcp/server.ts McpDeps.callBoundMs): a test shortens it to reach `running`. */
  mcpCallBoundMs?: number;
  /**
   * Whether this bridge is the compose appliance; default: runningInAppliance (its state dir inside a container).
   * A browser test sets it to show the appliance's pages (no-tunnel mode) without Docker.
   */
  appliance?: boolean;
}

export interface Bridge {
  config: Config;
  store: Store;
  registry: ReturnType<typeof createRegistry>;
  publicOrigin: ReturnType<typeof createPublicOrigin>;
  /** This bridge's terminal gate and live process trees (its mutation runtime's; tests read the gate). */
  terminal: TerminalState;
  /** The tool runner the data plane uses; a caller that is not a URL (a test, MCP) runs the same tools through it. */
  kernel: ToolKernel;
  /** Every tool the data plane routes to, native and extra. */
  tools: AnyToolDefinition[];
  controlUrl: string;
  dataUrl: string;
  /** Settles once the MCP edge's first-use work is done in the background (server/mcp/warm.ts). */
  mcpWarm: Promise<void>;
  close(): Promise<void>;
}

export async function startBridge(config: Config, options: BridgeOptions = {}): Promise<Bridge> {
  const log = options.log ?? createLogger(config.logLevel);
  // Before anything is opened: a control host that does not resolve stops the start with nothing to clean up.
  const controlAddresses = await resolveListenAddresses(config.control.hosts);
  // The launcher's probe (a spawn) runs while the store opens; the sandbox's first status() below waits for it.
  const containerMode = config.sandbox === "container";
  const probed = containerMode ? undefined : probeLauncherInBackground();
  // WAL checkpoints in a worker thread, so no commit on the event loop copies the WAL (store/wal-checkpointer.ts),
  // started once the planes listen and the first answers are out.
  const afterListen = afterListening();
  const store = openStore(config.stateDir, {
    checkpointWorker: {
      ...workerEntry(import.meta.url, "store/wal-checkpoint-worker"),
      startAfter: afterListen.promise,
    },
    onCheckpointFallBack: (reason) => log.warn("WAL checkpoints are back on the event loop", { reason }),
  });
  const reachContext = {
    inAppliance: options.appliance ?? runningInAppliance(config.stateDir),
    dataPlaneOnHost: config.dataPlaneOnHost,
  };
  const showTokenCommand = operatorCommand("token --show", config, {
    inAppliance: reachContext.inAppliance,
    cwd: undefined,
    env: process.env,
  });
  const credential = loadOperatorCredential(config.stateDir, config.operatorToken, log, showTokenCommand);
  const states = new SessionStates();
  const shutdown = new AbortController();
  // Every in-flight call (grep, terminal, gate waits) listens on this one signal and removes its listener when it
  // ends; Node's default cap of 10 is a leak heuristic that any 11 concurrent calls trip, with no leak behind it.
  setMaxListeners(0, shutdown.signal);
  const webTools = createWebTools({
    allow: parseWebAllowlist(config.web.allow),
    search: config.web.search,
    ...options.web,
  });
  const sandbox = createSandbox({
    config,
    codeDir: PACKAGE_ROOT,
    // Worktree sessions' folders are kept out of other projects' sandboxes as project roots are (issue 31).
    projectRoots: () => [...store.projects.list().map((p) => p.root), ...store.worktrees.list().map((w) => w.path)],
    warn: (message) => log.warn(message),
  });
  const tools = [
    ...createReadTools({ grepEngine: config.grepEngine, sandbox }),
    ...webTools,
    ...createMutationTools(sandbox),
    ...(options.extraTools ?? []),
  ];
  useSpawner(config.spawner === "auto");
  setSpawnerLog(log);
  // Each appliance labels its sandbox containers with its own instance name unless the operator chose one.
  const instanceOf = () => sandboxInstanceOf(store.settings, config.sandboxContainer.instance);
  const terminal = createTerminalState({
    ptyIdleMs: config.ptyIdleMs,
    ...(containerMode
      ? { container: { ...config, sandboxContainer: { ...config.sandboxContainer, instance: instanceOf() } } }
      : {}),
    limits: {
      memoryBytes: config.agentLimits.memoryBytes,
      growthBytes: config.agentLimits.growthBytes,
      scratchDir: config.scratchDir,
      log,
    },
  });
  terminal.startLimits();
  // The bridge is never the OOM killer's first pick: lowered where it may be (issue 28), reported either way.
  const bridgeOomScoreAdj = lowerOwnOomScore();
  if (terminal.container) {
    const warning = await terminal.container.removeLeftovers();
    if (warning) log.warn(warning);
    log.info(
      `terminal sandbox: container (one warm container per project root, image ${containerSandboxStatus(config).container.image})`,
    );
  } else {
    await probed;
    const status = sandbox.status();
    log.info(
      `terminal sandbox: ${status.mode} (URLBRIDGE_SANDBOX=${config.sandbox}, Landlock ABI ${status.landlockAbi})`,
    );
  }
  const limits = agentLimitsStatus({
    config,
    launcherApplies: Boolean(probeLauncher()?.agentLimits),
    bridgeOomScoreAdj,
  });
  if (limits.warning) log.warn(limits.warning);
  const mutation = createMutationRuntime({
    store,
    log,
    hooks: readTestHooks(),
    sandbox,
    terminal,
    review: config.review,
    checkpoints: config.checkpoints,
    ...(options.now ? { now: options.now } : {}),
  });
  // Before anything listens: settle intents a killed process left running (never re-run; patches rolled back).
  const plugins = createPluginHost(options.plugins ?? []);
  await recoverInterruptedIntents(mutation, [...tools, ...plugins.definitions()]);
  const publicOrigin = createPublicOrigin({
    envOrigin: config.publicOrigin,
    metricsUrl: config.tunnelMetrics,
    settings: store.settings,
    log,
  });
  const registry = createRegistry({
    store,
    states,
    tools,
    pluginTools: () =>
      plugins.plugins().flatMap((plugin) =>
        plugins.toolsOf(plugin.id).map((hosted) => ({
          name: pluginToolName(plugin.id, hosted.declared.id),
          enabled: (permissions: Permissions) =>
            isToolEnabled(hosted.definition, permissions) ||
            (hosted.mutation !== undefined && isToolEnabled(hosted.mutation, permissions)),
        })),
      ),
    // The capability a session's MCP view hands out: mutation when the project allows changes, else read.
    mcpTools: (permissions, worktreeSession) =>
      listedSpecs(
        { base: mutationEnabled(permissions) ? "m" : "r", permissions, worktreeSession },
        new Map([...tools, ...plugins.definitions()].map((t) => [t.id, t])),
        [...MCP_TOOL_SPECS, ...pluginSpecs(plugins)],
      ).map((spec) => spec.name),
    publicOrigin: () => publicOrigin.origin(),
    reachability: () => describeReachability(publicOrigin.state(), reachContext),
    growthOf: (sessionId) => ({
      addedBytes: terminal.growth.addedBy(sessionId),
      budgetBytes: terminal.growth.budgetBytes,
    }),
    worktreeOf: (sessionId) => worktrees.view(sessionId),
    // Whatever a session started ends with its capabilities (issue 10: nothing survives rotate/disable/delete).
    onScopeEnd: ({ sessionId, projectId, projectDeleted }) => {
      void terminal.processes
        .end({ ...(sessionId ? { sessionId } : {}), ...(projectId ? { projectId } : {}) })
        .then(() => {
          if (projectDeleted && projectId) sandbox.removeScratch(projectId);
        });
      void terminal.container?.endScope({ sessionId, projectId, projectDeleted });
    },
  });
  // Worktree sessions (issue 31): git runs as the project folder's owner; deletes a crash interrupted finish here.
  const ownerOf = (root: string) => ownerIdentityOf(root, config.agentFallback);
  const worktrees = createWorktreeSessions({
    ...{ store, registry: () => registry, config: config.worktrees, ownerOf },
    // In container mode the worktree's own container goes too, before its folder (the engine would make it again).
    endProcesses: async (sessionId) => {
      await terminal.processes.end({ sessionId });
      const row = store.worktrees.get(sessionId);
      if (row) await terminal.container?.removeRoot(row.projectId, row.path);
    },
    settleCalls: (sessionId) => mutation.journal.settleSession(sessionId),
  });
  await worktrees.finishInterrupted((message) => log.warn(message));
  if (config.ephemeralCapabilities) {
    registry.rotateAll();
    log.info("URLBRIDGE_EPHEMERAL_CAPABILITIES=1: every session received fresh capabilities");
  } else if (store.capabilityKeyReplaced) {
    registry.rotateAll();
    log.warn(
      "the capability key in the state directory does not match the database (restored or copied without it): every session received fresh capability URLs",
    );
  }
  const newer = newerMigrations(store.db);
  if (newer.length > 0) {
    log.warn(
      `the state database was used by a newer urlbridge (schema migrations this build does not have: ${newer.map((m) => `${m.version}-${m.name}`).join(", ")}); ` +
        "this build ignores them; if that release changed existing tables, restore the backup taken before the upgrade (deploy/UPGRADE.md)",
    );
  }

  // Read once (package.json) for the three edges that report it.
  const version = packageVersion();
  // One tool runner for every transport and for plugins: the URL data plane and /k now, MCP next.
  const kernel = createToolKernel({ log, mutation });
  // Unknown capabilities are counted and held alike on the data plane and the MCP socket (one tally, one log line).
  const unknownTokens = config.unknownTokenThrottle ? createUnknownTokenThrottle(log) : NO_UNKNOWN_TOKEN_THROTTLE;
  const dataPlane = createDataPlane({
    store,
    states,
    tools,
    kernel,
    plugins,
    resolveBlob: (ctx, blob, count) => resolveStagedContent({ ...ctx, mutation }, blob, count),
    publicOrigin: () => publicOrigin.origin(),
    log,
    signal: shutdown.signal,
    trustedProxies: config.trustedProxies,
    unknownTokens,
    agentFallback: config.agentFallback,
    ...(options.mcpCallBoundMs !== undefined ? { mcpCallBoundMs: options.mcpCallBoundMs } : {}),
    version,
  });
  const controlApp = createControlPlaneApp({
    inAppliance: reachContext.inAppliance,
    config,
    store,
    registry,
    publicOrigin,
    plugins,
    version,
    buildId: buildId(),
    credential,
    showTokenCommand,
    log,
    webRoot: path.join(PACKAGE_ROOT, "dist", "web"),
    sandbox: () => (containerMode ? containerSandboxStatus(config) : sandbox.status()),
    agentLimits: () => limits,
    limits: () => ({ pty: ptyLimits(terminal.ptys.idleMs), worktrees: worktrees.limits() }),
    worktrees,
    interactiveProcesses: () => terminal.ptys.screens(),
    review: createOperatorReview({
      store,
      kernel,
      tools,
      states,
      agentFallback: config.agentFallback,
      signal: shutdown.signal,
    }),
    terminalIdentity: (root) => (containerMode ? ownerOf(root) : sandbox.identityFor(root)),
    agentIdentity: ownerOf,
  });

  // Koa is the shell, the listener writes every byte (koa-shell.ts); clientError answers what Node cannot parse.
  const dataServer = http.createServer(
    { maxHeaderSize: DATA_PLANE_MAX_HEADER_BYTES },
    koaListener(createDataPlaneShell({ listener: dataPlane, log })),
  );
  dataServer.on("clientError", createClientErrorHandler(dataServer));
  const dataAddr = await listen(dataServer, config.data.host, config.data.port);
  const control = await listenAll(koaListener(controlApp), controlAddresses, config.control.port);
  // The stdio relay's way in on this host: one MCP server per connection, the same kernel (server/mcp/socket-*.ts).
  const mcpSocket = await listenMcpSocket(config.stateDir, {
    kernel,
    tools,
    plugins,
    states,
    publicOrigin: () => publicOrigin.origin(),
    log,
    signal: shutdown.signal,
    record: createActivityRecorder(store.activity),
    agentFallback: config.agentFallback,
    authenticate: createAuthenticator(store),
    unknownTokens,
    ...(options.mcpCallBoundMs !== undefined ? { callBoundMs: options.mcpCallBoundMs } : {}),
    version,
  });
  const dataUrl = `http://${hostForUrl(config.data.host)}:${dataAddr.port}`;
  const controlUrl = `http://${hostForUrl(config.control.host)}:${control.port}`;
  publicOrigin.setLocalOrigin(dataUrl);
  // Outside Docker: a quick tunnel we spawn ourselves, unless a cloudflared metrics server is configured already.
  const cloudflared =
    config.spawnCloudflared && !config.tunnelMetrics ? await startCloudflaredQuickTunnel({ dataUrl, log }) : undefined;
  if (cloudflared) publicOrigin.useMetrics(cloudflared.metricsUrl);
  publicOrigin.start();
  afterListen.listened();
  // The MCP edge's first-use work (the SDK, schema conversions, the HTTP leg), in the background once the first
  // answers are out (MCP_WARM_DELAY_MS after listening): mcp/warm.ts.
  const mcpWarm = warmMcp({ tools, plugins, log }, shutdown.signal);
  log.info(`control plane on ${controlUrl} (operator UI and /api; listening on ${controlAddresses.join(", ")})`);
  log.info(dataPlaneLine(dataUrl, config, reachContext));

  let closed = false;
  return {
    ...{ config, store, registry, publicOrigin, kernel, tools, controlUrl, dataUrl, terminal, mcpWarm },
    async close() {
      if (closed) return;
      closed = true;
      publicOrigin.stop();
      shutdown.abort();
      await Promise.all([
        closeServer(dataServer),
        ...control.servers.map(closeServer),
        mcpSocket.close(),
        cloudflared?.stop(),
      ]);
      // The abort ends every tree; wait until this bridge's are gone (its registry holds only its own) before
      // the store closes.
      terminal.stopLimits();
      await terminal.processes.end({}, "shutdown");
      await terminal.container?.removeAtShutdown();
      await mutation.journal.drain(SHUTDOWN_DRAIN_MS);
      mutation.checkpoints?.close();
      store.close();
      await store.closed();
    },
  };
}
