// How many requests one MCP socket connection has in the bridge at once (MCP_SOCKET_MAX_IN_FLIGHT, limits.ts).
// socket-connection.ts takes a slot for every request it hands on and stops reading the connection while all are
// taken. A slot is free again once the request is answered, or once it was cancelled (MCP: no answer comes) and
// its tool handler has returned: a cancelled call that is still running keeps its slot, so cancelling is no way
// around the bound.
type RpcId = string | number;

interface Ticket {
  id: RpcId;
  /** Run by the direct path (socket-direct-call.ts), which reports its end itself; else by the SDK. */
  direct: boolean;
  /** The tool handler (or the direct path) is running it. */
  running: boolean;
  answered: boolean;
  cancelled: boolean;
}

export class RequestSlots {
  /** Live tickets in the order taken; a client may reuse an id, so several can share one. */
  private readonly tickets: Ticket[] = [];

  constructor(
    readonly max: number,
    /** Called whenever a slot frees. */
    private readonly onFree: () => void,
  ) {}

  get used(): number {
    return this.tickets.length;
  }

  get full(): boolean {
    return this.tickets.length >= this.max;
  }

  /** A request handed on: to the direct path, which runs it at once, or to the SDK. */
  take(id: RpcId, direct = false): void {
    this.tickets.push({ id, direct, running: direct, answered: false, cancelled: false });
  }

  /** The SDK's answer to the request left (the oldest such ticket with this id). */
  answered(id: RpcId): void {
    this.update(
      id,
      (t) => !t.direct && !t.running && !t.answered,
      (t) => (t.answered = true),
    );
  }

  /** notifications/cancelled for this id: every live ticket with it. */
  cancelled(id: RpcId): void {
    for (const ticket of this.tickets) if (ticket.id === id) ticket.cancelled = true;
    this.sweep();
  }

  /** The SDK's tool handler for this id started (createMcpServer's onCall, server.ts). */
  started(id: RpcId): void {
    this.update(
      id,
      (t) => !t.direct && !t.running && !t.answered,
      (t) => (t.running = true),
    );
  }

  /** The SDK's tool handler for this id returned; its answer, unless cancelled, follows. */
  ended(id: RpcId): void {
    this.update(
      id,
      (t) => !t.direct && t.running,
      (t) => (t.running = false),
    );
  }

  /** The direct path's run for this id returned (its answer, if any, already written). */
  done(id: RpcId): void {
    this.update(
      id,
      (t) => t.direct && t.running,
      (t) => {
        t.running = false;
        t.answered = true;
      },
    );
  }

  /** Every ticket dropped (the connection closed). */
  clear(): void {
    this.tickets.length = 0;
  }

  private update(id: RpcId, pick: (t: Ticket) => boolean, change: (t: Ticket) => void): void {
    const ticket = this.tickets.find((t) => t.id === id && pick(t));
    if (!ticket) return;
    change(ticket);
    this.sweep();
  }

  private sweep(): void {
    const before = this.tickets.length;
    for (let i = this.tickets.length - 1; i >= 0; i--) {
      const t = this.tickets[i]!;
      if (!t.running && (t.answered || t.cancelled)) this.tickets.splice(i, 1);
    }
    if (this.tickets.length < before) this.onFree();
  }
}
