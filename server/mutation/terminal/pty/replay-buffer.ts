// The raw bytes a PTY process wrote, by absolute offset: the newest `capacity` bytes are kept, older ones are
// counted as lost. Pages are cut at UTF-8 character boundaries, so a character split across two pages (or across
// two chunks from the PTY) is never turned into replacement characters.

export interface ReplayPage {
  /** The offset asked for, moved forward to the oldest kept byte when those bytes were dropped. */
  offset: number;
  /** Where the next page starts: pass it back as offset= to continue. */
  nextOffset: number;
  /** Bytes written in total so far (the offset the stream has reached). */
  endOffset: number;
  /** Bytes between the offset asked for and the oldest kept byte, dropped by the bound before they were read. */
  lostBytes: number;
  text: string;
}

export class ReplayBuffer {
  private chunks: Buffer[] = [];
  private kept = 0;
  /** Absolute offset of chunks[0][0]. */
  private start = 0;

  constructor(readonly capacity: number) {}

  get endOffset(): number {
    return this.start + this.kept;
  }

  /** Bytes dropped from the front since the process started. */
  get droppedBytes(): number {
    return this.start;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.kept += chunk.length;
    while (this.kept > this.capacity) {
      const first = this.chunks[0]!;
      const excess = this.kept - this.capacity;
      if (first.length <= excess) {
        this.chunks.shift();
        this.kept -= first.length;
        this.start += first.length;
      } else {
        this.chunks[0] = Buffer.from(first.subarray(excess));
        this.kept -= excess;
        this.start += excess;
      }
    }
  }

  /** Up to `limit` bytes from `offset` (absolute), whole characters only. */
  read(offset: number, limit: number): ReplayPage {
    const endOffset = this.endOffset;
    const from = Math.min(Math.max(offset, this.start), endOffset);
    const lostBytes = Math.max(0, Math.min(this.start, endOffset) - offset);
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    if (this.chunks.length > 1) this.chunks = [all];
    let begin = from - this.start;
    // A page that starts inside a character (its head was dropped) skips the orphaned continuation bytes.
    while (begin < all.length && begin < from - this.start + 3 && isContinuation(all[begin]!)) begin++;
    let end = Math.min(all.length, begin + limit);
    if (end < all.length) end = wholeCharacters(all, begin, end);
    else end = wholeCharacters(all, begin, end, true);
    return {
      offset: this.start + begin,
      nextOffset: this.start + end,
      endOffset,
      lostBytes: lostBytes + (begin - (from - this.start)),
      text: all.subarray(begin, end).toString("utf8"),
    };
  }
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

/** Moves `end` back to the start of a character it would cut; at the stream's end, only an incomplete one. */
function wholeCharacters(buffer: Buffer, begin: number, end: number, atTail = false): number {
  let lead = end - 1;
  while (lead > begin && lead > end - 4 && isContinuation(buffer[lead]!)) lead--;
  if (lead < begin) return end;
  const byte = buffer[lead]!;
  const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
  if (lead + length <= end) return end;
  // The character is still arriving (tail) or continues on the next page: it starts the next read.
  return atTail || lead > begin ? lead : end;
}
