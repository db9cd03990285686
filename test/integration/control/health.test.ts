// /api/health names what is running: the package version and the build (the image's content hash, or "source").
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageVersion } from "../../../server/package-info.js";
import { startTestBridge, type TestBridge } from "../../helpers/bridge.js";

describe("/api/health", () => {
  let t: TestBridge;
  beforeAll(async () => {
    t = await startTestBridge();
  });
  afterAll(async () => t.close());

  it('reports the version and buildId "source" for a bridge run from the checkout, without auth', async () => {
    const res = await fetch(`${t.bridge.controlUrl}/api/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ ok: true, version: packageVersion(), buildId: "source" });
    expect(packageVersion()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
