// The edit benches' file: its line `value A` / `value B` flips on every edit, so each edit is a real change.
import fs from "node:fs";

/** Writes `bytes` (default 2 KiB) of text holding the line `value A`, the rest filler lines. */
export function writeFlipFile(file: string, bytes = 2048): void {
  const head = "# edited by the bench\nvalue A\n";
  const filler = `${"x".repeat(63)}\n`.repeat(Math.ceil(bytes / 64));
  fs.writeFileSync(file, (head + filler).slice(0, bytes - 1) + "\n");
}
