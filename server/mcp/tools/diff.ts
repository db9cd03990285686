// The compact diff MCP edit answers: one unified-diff hunk over the lines between the first and the last line
// that differ (newlines normalised to \n), with a few lines of context, bounded in lines.
const CONTEXT_LINES = 3;
/** Lines of the hunk body shown; the rest is summarised in one line. */
export const MAX_DIFF_LINES = 120;

export function compactDiff(path: string, before: string, after: string): string {
  if (before === after) return "";
  const a = before.split("\n");
  const b = after.split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const start = Math.max(0, head - CONTEXT_LINES);
  const aEnd = Math.min(a.length, a.length - tail + CONTEXT_LINES);
  const bEnd = Math.min(b.length, b.length - tail + CONTEXT_LINES);
  const body: string[] = [];
  for (let i = start; i < head; i++) body.push(` ${a[i]}`);
  for (let i = head; i < a.length - tail; i++) body.push(`-${a[i]}`);
  for (let i = head; i < b.length - tail; i++) body.push(`+${b[i]}`);
  for (let i = a.length - tail; i < aEnd; i++) body.push(` ${a[i]}`);
  const shown = body.length > MAX_DIFF_LINES ? [...body.slice(0, MAX_DIFF_LINES), `… ${body.length - MAX_DIFF_LINES} more diff lines not shown`] : body;
  const range = (from: number, to: number) => `${to - from === 0 ? from : from + 1},${to - from}`;
  return [`--- ${path}`, `+++ ${path}`, `@@ -${range(start, aEnd)} +${range(start, bEnd)} @@`, ...shown].join("\n");
}
