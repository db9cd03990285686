// A JSON-RPC batch line on a 2025-era MCP socket connection, answered as one line as the HTTP leg answers a
// batch POST (legacy-exchange.ts): the answers in the order of the requests, an array (one request: its answer
// alone, as the SDK's JSON transport sends it), nothing for a batch of notifications only. socket-connection.ts
// hands each request on as usual and gives every answer here first; a cancelled request drops out (no answer).
type RpcId = string | number;

interface Entry {
  id: RpcId | null;
  /** The answer's JSON text, once it came. */
  json?: string;
}

export class BatchAnswers {
  private readonly batches: Entry[][] = [];

  constructor(private readonly writeLine: (line: string) => void) {}

  /**
   * Opens a batch whose answers come in this order: a request's id waits for its answer, an error already known
   * (an item that is not JSON-RPC) is given as text. Nothing opens for a batch that expects no answer.
   */
  open(entries: Array<{ id: RpcId } | { error: string }>): void {
    const batch: Entry[] = entries.map((e) => ("error" in e ? { id: null, json: e.error } : { id: e.id }));
    if (batch.length === 0) return;
    this.batches.push(batch);
    this.flush();
  }

  /** Takes the answer when a batch waits for its id; false: it is no batch's (written as a line of its own). */
  answer(id: RpcId, json: string): boolean {
    for (const batch of this.batches) {
      const entry = batch.find((e) => e.id === id && e.json === undefined);
      if (!entry) continue;
      entry.json = json;
      this.flush();
      return true;
    }
    return false;
  }

  /** A cancelled request: no answer comes (MCP), so its batch no longer waits for one. */
  cancel(id: RpcId): void {
    for (const batch of this.batches) {
      const index = batch.findIndex((e) => e.id === id && e.json === undefined);
      if (index < 0) continue;
      batch.splice(index, 1);
      this.flush();
      return;
    }
  }

  /** Writes every batch whose answers are all in (the rest keep waiting: answers may leave in any order). */
  private flush(): void {
    for (let i = this.batches.length - 1; i >= 0; i--) {
      const batch = this.batches[i]!;
      if (!batch.every((e) => e.json !== undefined)) continue;
      this.batches.splice(i, 1);
      if (batch.length === 0) continue;
      this.writeLine(batch.length === 1 ? batch[0]!.json! : `[${batch.map((e) => e.json).join(",")}]`);
    }
  }
}
