// The standard encoders an agent's own code uses to put text into a query, each run for real where this
// machine has it (python3, java, curl) or reproduced from its documented rules (cited), plus the ~ grammar
// typed by hand. Issue 27: every one of them leaves ~ (or its %7E) for the bridge to read.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { form } from "./forms.js";

export type EncoderName =
  | "js-encodeURIComponent"
  | "js-URLSearchParams"
  | "py-quote"
  | "py-quote_plus"
  | "curl-data-urlencode"
  | "go-QueryEscape"
  | "java-URLEncoder"
  | "hand-tilde";

const hexByte = (b: number) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`;

/** Percent-encodes the UTF-8 of every character outside `keep` (upper-case hex); `space` replaces a space when given. */
function percentEncode(text: string, keep: RegExp, space?: string): string {
  let out = "";
  for (const ch of text) {
    if (space !== undefined && ch === " ") out += space;
    else if (keep.test(ch)) out += ch;
    else for (const b of Buffer.from(ch, "utf8")) out += hexByte(b);
  }
  return out;
}

/**
 * Go's net/url.QueryEscape: shouldEscape(c, encodeQueryComponent) keeps only the unreserved A-Z a-z 0-9 - _ . ~,
 * writes a space as + and every other byte as %XX with upper-case hex
 * (https://cs.opensource.google/go/go/+/refs/tags/go1.22.0:src/net/url/url.go, shouldEscape and escape).
 */
export const goQueryEscape = (text: string) => percentEncode(text, /^[A-Za-z0-9\-_.~]$/, "+");

/**
 * Java's URLEncoder.encode(s, UTF_8): "a-z, A-Z, 0-9, '.', '-', '*' and '_' remain the same; the space character
 * is converted into a plus sign; all other characters are ... represented by %xy" with upper-case hex
 * (https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/net/URLEncoder.html).
 */
export const javaUrlEncoder = (text: string) => percentEncode(text, /^[A-Za-z0-9.\-*_]$/, "+");

/** URLSearchParams' serializer (WHATWG application/x-www-form-urlencoded), as Node runs it. */
export const urlSearchParams = (text: string) => new URLSearchParams([["v", text]]).toString().slice(2);

/** urllib.parse.quote (safe="/") and quote_plus (safe=""), run by python3 itself for every text at once. */
export function pythonQuotes(texts: readonly string[]): Array<{ quote: string; quotePlus: string }> {
  const script =
    "import json,sys,urllib.parse as u\n" +
    "ts=json.loads(sys.stdin.buffer.read().decode('utf-8','surrogatepass'))\n" +
    "print(json.dumps([{'quote':u.quote(t),'quotePlus':u.quote_plus(t)} for t in ts]))";
  const run = spawnSync("python3", ["-c", script], { input: JSON.stringify(texts), encoding: "utf8" });
  if (run.status !== 0) throw new Error(`python3 failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as Array<{ quote: string; quotePlus: string }>;
}

/** URLEncoder.encode run by a real JVM when one is installed, else undefined (the reproduction then stands alone). */
export function javaEncodings(texts: readonly string[], workDir: string): string[] | undefined {
  const source = path.join(workDir, "Enc.java");
  fs.writeFileSync(
    source,
    [
      "import java.net.URLEncoder; import java.nio.charset.StandardCharsets; import java.util.HexFormat; import java.io.*;",
      "public class Enc { public static void main(String[] a) throws Exception {",
      "  BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));",
      "  for (String l; (l = r.readLine()) != null; ) System.out.println(URLEncoder.encode(new String(HexFormat.of().parseHex(l), StandardCharsets.UTF_8), StandardCharsets.UTF_8));",
      "} }",
    ].join("\n"),
  );
  const input = texts.map((t) => Buffer.from(t, "utf8").toString("hex")).join("\n") + "\n";
  const run = spawnSync("java", [source], { input, encoding: "utf8", timeout: 60_000 });
  if (run.error || run.status !== 0) return undefined;
  return run.stdout.split("\n").slice(0, texts.length);
}

/** The ~ grammar typed by hand (~n ~~ ~h ~p ~q ~a, ~uXXXX for controls; spaces and non-ASCII as is), sent by fetch. */
export const handTilde = (text: string) => form("agent-whatwg").tail(text);
