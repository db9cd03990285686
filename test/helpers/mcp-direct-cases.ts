// What the two direct tools/call suites (HTTP and the MCP socket) share: the project they read, the request they
// send, and the calls they compare with the SDK's own answers.
import fs from "node:fs";
import path from "node:path";

/** A tools/call request; `meta` (even `{}`) makes the direct path leave it to the SDK. */
export const toolCall = (id: number, name: string, args?: Record<string, unknown>, meta?: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, ...(args ? { arguments: args } : {}), ...(meta ? { _meta: meta } : {}) },
});

/** Writes the files DIRECT_CALL_CASES read: text, BOM + CRLF, Latin-1, binary, an image and a source folder. */
export function writeDirectCallFixture(projectDir: string): void {
  fs.writeFileSync(path.join(projectDir, "notes.txt"), "alpha\nbeta\n");
  fs.writeFileSync(
    path.join(projectDir, "bom-crlf.txt"),
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("één\r\ntwee\r\n")]),
  );
  fs.writeFileSync(path.join(projectDir, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
  fs.writeFileSync(path.join(projectDir, "blob.bin"), Buffer.from([0, 1, 2, 3, 0, 255]));
  // A 1x1 PNG: read answers it as image content.
  fs.writeFileSync(
    path.join(projectDir, "dot.png"),
    Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
      "base64",
    ),
  );
  fs.mkdirSync(path.join(projectDir, "src"));
  fs.writeFileSync(
    path.join(projectDir, "src", "app.ts"),
    "export function hello(name: string): string {\n  return `hi ${name}`;\n}\n",
  );
}

/** [case name, tool, arguments]: the read-only calls whose direct answer must equal the SDK's. */
export const DIRECT_CALL_CASES: Array<[string, string, Record<string, unknown> | undefined]> = [
  ["a text file", "read", { path: "notes.txt" }],
  ["a page of it", "read", { path: "notes.txt", offset: 2, limit: 1 }],
  ["a BOM + CRLF file", "read", { path: "bom-crlf.txt" }],
  ["a file that is not UTF-8", "read", { path: "latin1.txt" }],
  ["a binary file", "read", { path: "blob.bin" }],
  ["an image", "read", { path: "dot.png" }],
  ["a directory", "read", { path: "src" }],
  ["a missing file (a tool failure)", "read", { path: "missing.txt" }],
  ["a path outside the project (a tool failure)", "read", { path: "../outside.txt" }],
  ["stat", "stat", { path: "notes.txt" }],
  ["outline", "outline", { path: "src/app.ts" }],
  ["project, no arguments field", "project", undefined],
  ["glob", "glob", { pattern: "**/*.ts" }],
  ["grep", "grep", { pattern: "alpha" }],
];
