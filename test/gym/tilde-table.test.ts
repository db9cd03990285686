// Issue 27's decoding table, end to end against a real bridge: every standard encoder (run for real where the
// machine has it) and the ~ grammar by hand, times every content class, through /w, /e and /a. Each case ends
// with the intended bytes on disk, or a refusal, or a notice naming both ~ readings whose other URL, followed,
// writes the intended bytes. Never ok with other bytes and no notice.
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeUrlText } from "../../server/url-grammar/encode.js";
import {
  agentGet,
  makeTempDir,
  startTestBridge,
  type AgentSession,
  type TestBridge,
  writeAsAgent,
} from "../helpers/bridge.js";
import { rawGet } from "../helpers/raw-http.js";
import {
  goQueryEscape,
  handTilde,
  javaEncodings,
  javaUrlEncoder,
  pythonQuotes,
  urlSearchParams,
  type EncoderName,
} from "./encoders.js";

const CLASSES: ReadonlyArray<[string, string]> = [
  ["~n meant as an escape", "first line\nsecond line"],
  ["literal ~np", "mask = ~np.isnan(x)"],
  ["literal ~np, two lines", "mask = ~np.isnan(x)\nflag = ~~value\n"],
  ["~~", "~~value"],
  ["~~x~~", "~~x~~"],
  ["%02d", 'printf("%02d", n)'],
  ["+", "a + b"],
  ["&", "a && b"],
  ["#", "# title"],
  ["=", "x = 1"],
  ["non-ASCII", "café ✓ 日本 😀"],
  ["CRLF", "one\r\ntwo\r\n"],
  ["BOM", "\uFEFFbom"],
  ["binary-ish", "\u0001\u0002\u001b[0m\u007f\u0080ÿ"],
];
const ROUTES = ["w", "e", "a"] as const;
type Route = (typeof ROUTES)[number];
const ENCODERS: readonly EncoderName[] = [
  "js-encodeURIComponent",
  "js-URLSearchParams",
  "py-quote",
  "py-quote_plus",
  "curl-data-urlencode",
  "go-QueryEscape",
  "java-URLEncoder",
  "hand-tilde",
];

type Outcome = "exact" | "exact, with notice" | "notice, other reading followed" | "refused";
interface Notice {
  tilde?: "escapes" | "literal";
  thisReading?: { reading: string; url: string };
  otherReadings: Array<{ reading: string; url: string }>;
}
interface Answer {
  ok: boolean;
  errorCode?: string;
  decoding?: Notice;
}

const patchOf = (name: string, text: string) =>
  `*** Begin Patch\n*** Add File: ${name}\n${text
    .split("\n")
    .map((l) => `+${l}`)
    .join("\n")}\n*** End Patch`;

describe("the ~ decoding table: every encoder x every content class x /w /e /a", () => {
  let t: TestBridge;
  let s: AgentSession;
  let m: string;
  let origin: string;
  let work: string;
  const python = new Map<string, { quote: string; quotePlus: string }>();
  const tally = new Map<string, number>();
  let n = 0;

  beforeAll(async () => {
    t = await startTestBridge();
    s = await t.session({ write: true, terminal: false });
    m = s.m!;
    origin = new URL(m).origin;
    work = makeTempDir("tilde-table");
    const texts = CLASSES.map(([, text]) => text);
    pythonQuotes(texts).forEach((q, i) => python.set(texts[i]!, q));
  });
  afterAll(async () => {
    console.log(JSON.stringify(Object.fromEntries(tally), null, 1));
    await t?.close();
  });

  const onDisk = (name: string) => fs.readFileSync(path.join(t.projectDir, name));
  const get = async (url: string): Promise<Answer> => {
    const res = await rawGet(origin, url.slice(origin.length));
    return JSON.parse(res.body) as Answer;
  };

  /** The encoded value of `text` as `encoder` writes it, for a parameter or the raw tail. */
  function encode(encoder: EncoderName, text: string): string {
    switch (encoder) {
      case "js-encodeURIComponent":
        return encodeURIComponent(text);
      case "js-URLSearchParams":
        return urlSearchParams(text);
      case "py-quote":
        return python.get(text)?.quote ?? pythonQuotes([text])[0]!.quote;
      case "py-quote_plus":
        return python.get(text)?.quotePlus ?? pythonQuotes([text])[0]!.quotePlus;
      case "go-QueryEscape":
        return goQueryEscape(text);
      case "java-URLEncoder":
        return javaUrlEncoder(text);
      case "hand-tilde":
        return handTilde(text);
      case "curl-data-urlencode":
        throw new Error("curl encodes as it sends");
    }
  }

  /** Sends `url` + &raw=<content> the way the encoder's user would: exact bytes, fetch for the hand-typed URL, or curl itself. */
  async function send(encoder: EncoderName, url: string, content: string): Promise<Answer> {
    if (encoder === "curl-data-urlencode") {
      const file = path.join(work, `c${n++}`);
      writeAsAgent(file, content);
      // Asynchronously: the bridge answering curl runs in this process.
      const { stdout } = await promisify(execFile)(
        "curl",
        ["-sG", "--max-time", "20", "--data-urlencode", `raw@${file}`, url],
        { encoding: "utf8" },
      );
      return JSON.parse(stdout) as Answer;
    }
    const full = `${url}&raw=${encode(encoder, content)}`;
    return encoder === "hand-tilde" ? agentGet<Answer>(full) : get(full);
  }

  /** Runs one case on a fresh file: its URL, how to put the file back before another attempt, the intended bytes. */
  async function prepare(route: Route, name: string, text: string) {
    const file = path.join(t.projectDir, name);
    if (route === "w")
      return {
        url: `${m}/w?path=${name}`,
        content: text,
        reset: () => agentGet(`${s.r}/r?path=${name}`),
        intended: Buffer.from(text, "utf8"),
      };
    if (route === "e") {
      // The intended file is what the same edit makes when it travels exactly (the reference encoder, declared):
      // /e keeps a file's own line endings, which is the edit's meaning, not the transport's.
      const mark = (file: string) => `MARK${path.basename(file).replace(/\W/g, "")}`;
      const oracle = path.join(t.projectDir, `${name}.oracle`);
      writeAsAgent(oracle, mark(oracle));
      await agentGet(`${s.r}/r?path=${name}.oracle`);
      const made = await get(`${m}/e?path=${name}.oracle&old=${mark(oracle)}&enc=tilde&raw=${encodeUrlText(text)}`);
      expect(made, JSON.stringify(made)).toMatchObject({ ok: true });
      const reset = async () => {
        writeAsAgent(file, mark(file));
        await agentGet(`${s.r}/r?path=${name}`);
      };
      await reset();
      return { url: `${m}/e?path=${name}&old=${mark(file)}`, content: text, reset, intended: onDisk(`${name}.oracle`) };
    }
    // /a: the intended file is what the same patch makes when it travels exactly (the reference encoder, declared).
    const oracle = `${name}.oracle`;
    const made = await get(`${m}/a?enc=tilde&raw=${encodeUrlText(patchOf(oracle, text))}`);
    expect(made, JSON.stringify(made)).toMatchObject({ ok: true });
    return {
      url: `${m}/a?`,
      content: patchOf(name, text),
      reset: async () => fs.rmSync(file, { force: true }),
      intended: onDisk(oracle),
    };
  }

  /** The verdict on one answer; fails the test on ok with other bytes and no notice. */
  async function judge(
    answer: Answer,
    name: string,
    intended: Buffer,
    reset: () => Promise<unknown>,
  ): Promise<Outcome> {
    if (!answer.ok) {
      expect(answer.errorCode, JSON.stringify(answer)).toBeTruthy();
      return "refused";
    }
    const notice = answer.decoding?.tilde !== undefined ? answer.decoding : undefined;
    if (onDisk(name).equals(intended)) return notice ? "exact, with notice" : "exact";
    expect(
      notice,
      `ok with other bytes and no ~ notice: ${JSON.stringify(onDisk(name).toString())} ${JSON.stringify(answer)}`,
    ).toBeDefined();
    expect(notice!.thisReading?.url).toMatch(/[?&]enc=(tilde|pct)(&|$)/);
    const other = notice!.otherReadings.find((r) => r.reading.startsWith("~ as"));
    expect(other, JSON.stringify(notice)).toBeDefined();
    await reset();
    const followed = await get(other!.url);
    expect(followed, JSON.stringify(followed)).toMatchObject({ ok: true });
    expect(followed.decoding?.tilde).toBeUndefined();
    expect(onDisk(name).toString("utf8")).toBe(intended.toString("utf8"));
    expect(onDisk(name).equals(intended)).toBe(true);
    return "notice, other reading followed";
  }

  it("reproduces Java's URLEncoder byte for byte (checked against a real JVM when one is installed)", () => {
    const texts = CLASSES.map(([, text]) => text);
    const real = javaEncodings(texts, work);
    if (real) expect(real).toEqual(texts.map(javaUrlEncoder));
    expect(javaUrlEncoder("a ~*'()")).toBe("a+%7E*%27%28%29");
  });

  describe.each(ENCODERS)("%s", (encoder) => {
    it.each(CLASSES.flatMap(([label, text]) => ROUTES.map((route) => [label, route, text] as const)))(
      "%s through /%s",
      async (_label, route, text) => {
        const name = `t${n++}-${route}.txt`;
        const c = await prepare(route, name, text);
        const answer = await send(encoder, c.url, c.content);
        const outcome = await judge(answer, name, c.intended, c.reset);
        const key = `${encoder} | ${outcome}`;
        tally.set(key, (tally.get(key) ?? 0) + 1);
      },
    );
  });

  describe("a declaration removes all doubt", () => {
    it.each(CLASSES.flatMap(([label, text]) => ROUTES.map((route) => [label, route, text] as const)))(
      "enc=pct: encodeURIComponent's %s through /%s is exact, with no ~ notice",
      async (_label, route, text) => {
        const name = `d${n++}-${route}.txt`;
        const c = await prepare(route, name, text);
        const answer = await get(
          `${c.url}${c.url.endsWith("?") ? "" : "&"}enc=pct&raw=${encodeURIComponent(c.content)}`,
        );
        expect(answer, JSON.stringify(answer)).toMatchObject({ ok: true });
        expect(answer.decoding?.tilde).toBeUndefined();
        expect(onDisk(name).equals(c.intended)).toBe(true);
      },
    );

    it.each(CLASSES.flatMap(([label, text]) => ROUTES.map((route) => [label, route, text] as const)))(
      "enc=tilde: the hand-typed %s through /%s is exact, with no ~ notice",
      async (_label, route, text) => {
        const name = `h${n++}-${route}.txt`;
        const c = await prepare(route, name, text);
        const answer = await agentGet<Answer>(
          `${c.url}${c.url.endsWith("?") ? "" : "&"}enc=tilde&raw=${handTilde(c.content)}`,
        );
        expect(answer, JSON.stringify(answer)).toMatchObject({ ok: true });
        expect(answer.decoding?.tilde).toBeUndefined();
        expect(onDisk(name).equals(c.intended)).toBe(true);
      },
    );
  });
});
