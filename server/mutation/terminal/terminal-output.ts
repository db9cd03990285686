// Bounded capture of a command's output stream: keeps the first and the last bytes, counts what was dropped
// between them, and renders UTF-8 text cut only at character boundaries with a visible truncation notice.

/** Output kept per stream: the beginning (what failed first) and the end (the summary, the last error). */
export const STDOUT_LIMITS = { headBytes: 8 * 1024, tailBytes: 8 * 1024 } as const;
export const STDERR_LIMITS = { headBytes: 4 * 1024, tailBytes: 4 * 1024 } as const;

export interface OutputLimits {
  headBytes: number;
  tailBytes: number;
}

export interface BoundedText {
  text: string;
  /** Bytes the stream produced in total. */
  bytes: number;
  truncated: boolean;
  /** Bytes left out between head and tail (0 when not truncated). */
  omittedBytes: number;
}

/** Index of the first byte of the UTF-8 character that contains `at` (walks back over continuation bytes). */
function charStart(buffer: Buffer, at: number): number {
  let i = at;
  while (i > 0 && i > at - 4 && (buffer[i]! & 0xc0) === 0x80) i--;
  return i;
}

export class OutputCollector {
  private head: Buffer[] = [];
  private headLength = 0;
  private tail: Buffer[] = [];
  private tailLength = 0;
  private total = 0;

  constructor(private readonly limits: OutputLimits) {}

  get bytes(): number {
    return this.total;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headLength < this.limits.headBytes) {
      const take = Math.min(rest.length, this.limits.headBytes - this.headLength);
      this.head.push(rest.subarray(0, take));
      this.headLength += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0 || this.limits.tailBytes === 0) return;
    this.tail.push(Buffer.from(rest));
    this.tailLength += rest.length;
    // Compact once the tail holds twice its budget, so memory stays bounded without copying on every chunk.
    if (this.tailLength > this.limits.tailBytes * 2) this.compactTail();
  }

  private compactTail(): void {
    const joined = Buffer.concat(this.tail);
    const kept = joined.subarray(Math.max(0, joined.length - this.limits.tailBytes));
    this.tail = [Buffer.from(kept)];
    this.tailLength = kept.length;
  }

  /** Renders the captured text; a truncated stream gets a one-line notice where bytes were dropped. */
  render(): BoundedText {
    this.compactTail();
    const head = Buffer.concat(this.head);
    const tail = Buffer.concat(this.tail);
    const kept = head.length + tail.length;
    if (kept === this.total) {
      return {
        text: Buffer.concat([head, tail]).toString("utf8"),
        bytes: this.total,
        truncated: false,
        omittedBytes: 0,
      };
    }
    // Cut the head before a character that straddles its end, and start the tail at a character boundary.
    const headComplete = completeLength(head);
    const tailStart = skipContinuation(tail);
    const omitted = this.total - headComplete - (tail.length - tailStart);
    const notice = `\n[... ${omitted} bytes omitted; ${this.total} bytes in total. Redirect to a file and read it with /r, or narrow the output ...]\n`;
    return {
      text: head.subarray(0, headComplete).toString("utf8") + notice + tail.subarray(tailStart).toString("utf8"),
      bytes: this.total,
      truncated: true,
      omittedBytes: omitted,
    };
  }
}

/** Length of the prefix of `buffer` that ends on a whole UTF-8 character. */
function completeLength(buffer: Buffer): number {
  if (buffer.length === 0) return 0;
  const start = charStart(buffer, buffer.length - 1);
  return start + expectedLength(buffer[start]) <= buffer.length ? buffer.length : start;
}

/** Length of the UTF-8 sequence introduced by `lead` (1 for ASCII or an invalid lead). */
function expectedLength(lead: number | undefined): number {
  if (lead === undefined) return 0;
  if (lead >= 0xf0) return 4;
  if (lead >= 0xe0) return 3;
  if (lead >= 0xc0) return 2;
  return 1;
}

function skipContinuation(buffer: Buffer): number {
  let i = 0;
  while (i < buffer.length && i < 3 && (buffer[i]! & 0xc0) === 0x80) i++;
  return i;
}
