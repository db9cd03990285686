// Real URL readers in the loop: raw bytes over a socket, Node's fetch, curl, and headless Chromium
// reading document.body.innerText. Each takes the URL as the agent typed it and follows redirects.
import { execFile, spawnSync } from "node:child_process";
import fs from "node:fs";
import type { Browser, Page } from "playwright-core";
import { CHROMIUM_PATH, launchChromium } from "../helpers/chromium.js";
import { wireGet } from "./wire-http.js";

export type ReaderName = "node-bytes" | "fetch" | "curl" | "chromium";

export interface ReaderResponse {
  status: number;
  body: string;
}

export interface Reader {
  name: ReaderName;
  get(url: string, timeoutMs: number): Promise<ReaderResponse>;
  close(): Promise<void>;
}

const MAX_REDIRECTS = 5;

/** Sends the typed URL's UTF-8 bytes as they are (no normalisation), following redirects by hand. */
function createBytesReader(): Reader {
  return {
    name: "node-bytes",
    async get(url, timeoutMs) {
      let current = url;
      for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
        const at = current.indexOf("/", current.indexOf("//") + 2);
        const origin = current.slice(0, at);
        const res = await wireGet(origin, Buffer.from(current.slice(at), "utf8").toString("latin1"), { timeoutMs });
        const location = res.headers.location;
        if (res.status >= 300 && res.status < 400 && location) {
          current = location.startsWith("/")
            ? `${origin}${Buffer.from(location, "latin1").toString("utf8")}`
            : location;
          continue;
        }
        return { status: res.status, body: res.body.toString("utf8") };
      }
      throw new Error("too many redirects");
    },
    async close() {},
  };
}

function createFetchReader(): Reader {
  return {
    name: "fetch",
    async get(url, timeoutMs) {
      const res = await fetch(url, { redirect: "follow", signal: AbortSignal.timeout(timeoutMs) });
      return { status: res.status, body: await res.text() };
    },
    async close() {},
  };
}

/** curl as an agent's shell would run it: -g so [] {} are not glob syntax, -L to follow redirects. */
function createCurlReader(): Reader {
  return {
    name: "curl",
    get(url, timeoutMs) {
      const args = [
        "-g",
        "-s",
        "-S",
        "-L",
        "--max-time",
        String(Math.ceil(timeoutMs / 1000)),
        "-w",
        "\n%{http_code}",
        url,
      ];
      return new Promise((resolve, reject) => {
        execFile("curl", args, { encoding: "buffer", maxBuffer: 8 * 1024 * 1024 }, (error, stdout, stderr) => {
          if (error) return reject(new Error(`curl failed: ${stderr.toString("utf8").trim() || error.message}`));
          const text = stdout.toString("utf8");
          const nl = text.lastIndexOf("\n");
          resolve({ status: Number(text.slice(nl + 1)), body: text.slice(0, nl) });
        });
      });
    },
    async close() {},
  };
}

/** Headless Chromium navigating to the URL; the body is what a browsing agent sees: document.body.innerText. */
async function createChromiumReader(): Promise<Reader> {
  const browser: Browser = await launchChromium();
  const context = await browser.newContext();
  const idle: Page[] = [];
  return {
    name: "chromium",
    async get(url, timeoutMs) {
      const page = idle.pop() ?? (await context.newPage());
      try {
        const res = await page.goto(url, { waitUntil: "load", timeout: timeoutMs });
        // Runs in the page, where document exists; the test tsconfig has no DOM types.
        const body = await page.evaluate("document.body ? document.body.innerText : ''");
        idle.push(page);
        return { status: res?.status() ?? 0, body: String(body) };
      } catch (error) {
        // A page left mid-navigation (a timeout) would abort the next navigation on it: drop it. Not awaited:
        // closing a page whose navigation was cut at the wrong moment can take until the browser closes.
        void page.close().catch(() => undefined);
        throw error;
      }
    },
    async close() {
      await browser.close();
    },
  };
}

export function chromiumAvailable(): boolean {
  return fs.existsSync(CHROMIUM_PATH);
}

export function curlAvailable(): boolean {
  return spawnSync("curl", ["--version"]).status === 0;
}

/** Every reader this machine has; .ci/run installs curl and Chromium when they are missing. */
export function availableReaders(): ReaderName[] {
  return [
    "fetch",
    "node-bytes",
    ...(curlAvailable() ? (["curl"] as const) : []),
    ...(chromiumAvailable() ? (["chromium"] as const) : []),
  ];
}

export async function createReader(name: ReaderName): Promise<Reader> {
  switch (name) {
    case "node-bytes":
      return createBytesReader();
    case "fetch":
      return createFetchReader();
    case "curl":
      return createCurlReader();
    case "chromium":
      return createChromiumReader();
  }
}
