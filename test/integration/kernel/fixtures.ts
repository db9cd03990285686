// Helpers shared by the read-kernel integration tests: exact URLs built with the bridge's own encoder and
// project trees written byte for byte.
import fs from "node:fs";
import path from "node:path";
import { encodeQueryValue, encodeUrlText } from "../../../server/transport/encode.js";

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
