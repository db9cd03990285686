// The start-up transcript of a background launch: bounded output captured for a short window, and the local
// URLs and ports it announces ("Local: http://localhost:5173/", "listening on port 3000").
import { OutputCollector, type BoundedText } from "./terminal-output.js";

/** Longest a background launch is watched before the request answers. */
export const STARTUP_WINDOW_MS = 3000;
/** Once an address was announced, this much silence ends the window early. */
export const STARTUP_QUIET_MS = 300;
/** Transcript kept for the response (stdout and stderr interleaved as they arrived). */
export const STARTUP_TRANSCRIPT_LIMITS = { headBytes: 6 * 1024, tailBytes: 2 * 1024 } as const;
/** Addresses reported at most; a chatty process cannot grow the response. */
export const MAX_DETECTED = 8;
/** A single line longer than this is scanned only up to here. */
const MAX_SCANNED_LINE = 4096;

// An OSC sequence runs to its BEL but never past another ESC: without that stop, a line of unterminated ESC ]
// was rescanned from each of them (quadratic; every line of a process's start-up window is scanned).
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*\x07/g;
const LOCAL_URL =
  /\bhttps?:\/\/(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1?\])(?::(\d{1,5}))?(?:\/[^\s'"<>`)\]]*)?/gi;
const LOCAL_HOST_PORT = /(?:^|[\s(=])(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1?\]|\*):(\d{2,5})\b/gi;
const PORT_PHRASE =
  /\b(?:listen(?:ing)?|running|started|serving|server|available|ready|bound|open)\b[^\n]{0,60}?\bport\b\s*[:=#]?\s*(\d{2,5})\b/gi;

export interface DetectedEndpoints {
  urls: string[];
  ports: number[];
}

const validPort = (text: string | undefined) => {
  const port = Number(text);
  return Number.isInteger(port) && port >= 1 && port <= 65535 ? port : undefined;
};

/** A URL without the sentence punctuation after it ("see http://localhost:3000."), by a backward scan. */
function withoutTrailingPunctuation(url: string): string {
  let end = url.length;
  while (end > 0 && ".,;:!?".includes(url[end - 1]!)) end--;
  return url.slice(0, end);
}

/** Adds the loopback/any-address URLs and ports mentioned in `line` to `into`. */
export function detectInLine(rawLine: string, into: DetectedEndpoints): void {
  const line = rawLine.slice(0, MAX_SCANNED_LINE).replace(ANSI, "");
  const addPort = (text: string | undefined) => {
    const port = validPort(text);
    if (port !== undefined && !into.ports.includes(port) && into.ports.length < MAX_DETECTED) into.ports.push(port);
  };
  for (const m of line.matchAll(LOCAL_URL)) {
    const url = withoutTrailingPunctuation(m[0]);
    if (!into.urls.includes(url) && into.urls.length < MAX_DETECTED) into.urls.push(url);
    addPort(m[1] ?? (url.startsWith("https:") ? "443" : undefined));
  }
  for (const m of line.matchAll(LOCAL_HOST_PORT)) addPort(m[1]);
  for (const m of line.matchAll(PORT_PHRASE)) addPort(m[1]);
}

export function detectEndpoints(text: string): DetectedEndpoints {
  const found: DetectedEndpoints = { urls: [], ports: [] };
  for (const line of text.split(/\r?\n|\r/)) detectInLine(line, found);
  return found;
}

/** Collects the transcript and scans it line by line as it arrives. */
export class StartupTranscript {
  private readonly output = new OutputCollector(STARTUP_TRANSCRIPT_LIMITS);
  private partial = "";
  // ignoreBOM: a leading U+FEFF is text here, as everywhere else in the bridge.
  private readonly decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  readonly detected: DetectedEndpoints = { urls: [], ports: [] };
  lastOutputAt: number | undefined;

  push(chunk: Buffer): void {
    this.lastOutputAt = Date.now();
    this.output.push(chunk);
    const text = this.partial + this.decoder.decode(chunk, { stream: true });
    const lines = text.split(/\r?\n|\r/);
    this.partial = (lines.pop() ?? "").slice(-MAX_SCANNED_LINE);
    for (const line of lines) detectInLine(line, this.detected);
  }

  hasAddress(): boolean {
    return this.detected.urls.length > 0 || this.detected.ports.length > 0;
  }

  /** Final transcript; scans the unterminated last line too. */
  finish(): BoundedText {
    if (this.partial) detectInLine(this.partial, this.detected);
    this.partial = "";
    return this.output.render();
  }

  /** The start-up part of a bg=1 launch's result, as every launch path reports it. */
  report(startup: StartupEnd, startedAt: number) {
    const transcript = this.finish();
    return {
      startup,
      startupMs: Math.round(performance.now() - startedAt),
      transcript,
      detectedUrls: [...this.detected.urls],
      detectedPorts: [...this.detected.ports],
    };
  }
}

export type StartupEnd = "exited" | "announced" | "window";

export interface StartupWatchOptions {
  transcript: StartupTranscript;
  exited: Promise<unknown>;
  windowMs?: number;
  quietMs?: number;
}

/** Resolves when the process exits, when it announced an address and went quiet, or when the window closes. */
export function watchStartup(options: StartupWatchOptions): Promise<StartupEnd> {
  const windowMs = options.windowMs ?? STARTUP_WINDOW_MS;
  const quietMs = options.quietMs ?? STARTUP_QUIET_MS;
  const started = Date.now();
  return new Promise((resolve) => {
    let done = false;
    const finish = (end: StartupEnd) => {
      if (done) return;
      done = true;
      clearInterval(timer);
      resolve(end);
    };
    void options.exited.then(
      () => finish("exited"),
      () => finish("exited"),
    );
    const timer = setInterval(
      () => {
        const now = Date.now();
        const quietSince = options.transcript.lastOutputAt ?? started;
        if (options.transcript.hasAddress() && now - quietSince >= quietMs) finish("announced");
        else if (now - started >= windowMs) finish("window");
      },
      Math.min(50, quietMs),
    );
  });
}
