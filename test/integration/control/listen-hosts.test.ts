// URLBRIDGE_CONTROL_HOST as a list (issue 10, item 5): the control plane listens on each named address and on
// no other, so compose can keep it off the tunnel's network (127.0.0.1 plus the bridge's control-network alias).
import net from "node:net";
import { describe, expect, it } from "vitest";
import { startTestBridge, TEST_OPERATOR_TOKEN } from "../../helpers/bridge.js";
import { rawRequest } from "./http-client.js";

function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

describe("control plane listen addresses", () => {
  it("listens on every listed address, on one port, and refuses connections on any other", async () => {
    const t = await startTestBridge({ URLBRIDGE_CONTROL_HOST: "127.0.0.1,127.0.0.2" });
    try {
      const port = Number(new URL(t.bridge.controlUrl).port);
      expect(t.bridge.controlUrl).toBe(`http://127.0.0.1:${port}`);
      for (const host of ["127.0.0.1", "127.0.0.2"]) {
        const res = await rawRequest(`http://${host}:${port}/api/projects`, {
          headers: { host: `localhost:${port}`, authorization: `Bearer ${TEST_OPERATOR_TOKEN}` },
        });
        expect(res.status, host).toBe(200);
      }
      expect(await connects("127.0.0.3", port)).toBe(false);
    } finally {
      await t.close();
    }
  });

  it("stops at start, naming the variable, when a listed name does not resolve", async () => {
    await expect(startTestBridge({ URLBRIDGE_CONTROL_HOST: "127.0.0.1,no-such-bridge-alias.invalid" })).rejects.toThrow(
      /URLBRIDGE_CONTROL_HOST: cannot resolve "no-such-bridge-alias.invalid"/,
    );
  });
});
