// Helpers shared by the read-kernel integration tests: exact URLs built with the bridge's own encoder and
// project trees written byte for byte.
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { fingerprintBytes, readCoverage } from "../../../server/kernel/read/read-coverage.js";
import { defineTool } from "../../../server/kernel/tool/definition.js";
import { resolveInsideRoot } from "../../../server/sandbox/paths.js";
import { encodeQueryValue, encodeUrlText } from "../../../server/url-grammar/encode.js";

export type Params = Array<[string, string | number]>;

/** base/route?k=v...&raw=<content>, every value encoded the way the bridge encodes the URLs it hands out. */
export function url(base: string, route: string, params: Params = [], raw?: string): string {
  const parts = params.map(([k, v]) => `${k}=${encodeQueryValue(String(v))}`);
  if (raw !== undefined) parts.push(`raw=${encodeUrlText(raw)}`);
  return `${base}/${route}${parts.length > 0 ? `?${parts.join("&")}` : ""}`;
}

/** Writes files (creating folders); a Buffer is written as is. */
export function writeTree(root: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const full = path.join(root, rel);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, content);
  }
}

export function utf16(text: string, bigEndian: boolean): Buffer {
  const body = Buffer.from(text, "utf16le");
  if (bigEndian) body.swap16();
  return Buffer.concat([Buffer.from(bigEndian ? [0xfe, 0xff] : [0xff, 0xfe]), body]);
}

export const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * A read-only observer tool for tests: reports what the session's read coverage says about a file, the way
 * /w will consult it. It is a real tool run by the real gateway, not a stand-in for one of ours.
 */
export const coverageProbeTool = defineTool({
  id: "coverage_probe",
  route: "cov",
  longRoutes: [],
  capability: "read",
  description: "Test-only: read coverage of one file.",
  example: "/cov?path=a.txt",
  schema: z.object({ path: z.string() }),
  output: z.strictObject({
    ok: z.literal(true),
    complete: z.boolean(),
    missing: z.array(z.tuple([z.number(), z.number()])),
  }),
  url: {},
  async execute(args, ctx) {
    const target = resolveInsideRoot(ctx.project.root, args.path, { allowMissing: false });
    const bytes = fs.readFileSync(target.absolute);
    const fingerprint = fingerprintBytes(bytes);
    const coverage = readCoverage.of(ctx.state);
    return {
      ok: true,
      complete: coverage.isComplete(target.absolute, fingerprint),
      missing: coverage.missing(target.absolute, fingerprint, bytes.length),
    };
  },
});
