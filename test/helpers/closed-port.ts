// A loopback port nothing listens on, for tests that need a refused connection (a tunnel or plugin that is down).
import net from "node:net";

/** Binds port 0 on 127.0.0.1, reads the port, closes it: nothing listens there afterwards. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
