// How hints spell a `urlbridge` command so it can be pasted as shown, in each place the operator may be.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { operatorCommand, startCommand, CLI_PACKAGE_ROOT } from "../../../server/cli/invocation.js";
import { loadConfig } from "../../../server/config.js";
import { makeTempDir } from "../../helpers/bridge.js";

const home = makeTempDir("home");
const env = { HOME: home, PATH: "/usr/bin:/bin" };
const defaultConfig = loadConfig({ HOME: home });
const customConfig = loadConfig({ HOME: home, URLBRIDGE_STATE_DIR: "/srv/urlbridge-state" });
const root = fs.realpathSync(CLI_PACKAGE_ROOT);

describe("operatorCommand", () => {
  it.each([
    [
      "in the appliance",
      defaultConfig,
      { inAppliance: true, cwd: "/", env },
      "docker compose exec bridge urlbridge session list",
    ],
    ["in the checkout", defaultConfig, { inAppliance: false, cwd: root, env }, "npx urlbridge session list"],
    [
      "below the checkout",
      defaultConfig,
      { inAppliance: false, cwd: path.join(root, "server"), env },
      "npx urlbridge session list",
    ],
    [
      "outside the checkout",
      defaultConfig,
      { inAppliance: false, cwd: os.tmpdir(), env },
      `node ${root}/bin/urlbridge.js session list`,
    ],
    [
      "cwd unknown (the login page)",
      defaultConfig,
      { inAppliance: false, cwd: undefined, env },
      "npx urlbridge session list",
    ],
    [
      "another state dir",
      customConfig,
      { inAppliance: false, cwd: root, env },
      "URLBRIDGE_STATE_DIR=/srv/urlbridge-state npx urlbridge session list",
    ],
  ])("%s: %s", (_where, config, context, expected) => {
    expect(operatorCommand("session list", config, context)).toBe(expected);
  });

  it("uses plain `urlbridge` when PATH has this package's bin (npm link, a global install)", () => {
    const bin = makeTempDir("bin");
    fs.symlinkSync(path.join(root, "bin", "urlbridge.js"), path.join(bin, "urlbridge"));
    expect(
      operatorCommand("token --show", defaultConfig, {
        inAppliance: false,
        cwd: os.tmpdir(),
        env: { ...env, PATH: `${bin}:/usr/bin` },
      }),
    ).toBe("urlbridge token --show");
  });

  it("ignores the PATH npx runs it with: its temp bin and node_modules/.bin are not the operator's", () => {
    const npxBin = path.join(makeTempDir("npx"), "_npx", "abc", "node_modules", ".bin");
    fs.mkdirSync(npxBin, { recursive: true });
    fs.symlinkSync(path.join(root, "bin", "urlbridge.js"), path.join(npxBin, "urlbridge"));
    const context = { inAppliance: false, cwd: root, env: { ...env, PATH: `${npxBin}:/usr/bin` } };
    expect(operatorCommand("session list", defaultConfig, context)).toBe("npx urlbridge session list");
    const linked = makeTempDir("linked-bin");
    fs.symlinkSync(path.join(root, "bin", "urlbridge.js"), path.join(linked, "urlbridge"));
    expect(
      operatorCommand("session list", defaultConfig, {
        ...context,
        env: { ...env, PATH: `${linked}:/usr/bin`, npm_command: "exec" },
      }),
    ).toBe("npx urlbridge session list");
  });

  it("names how the bridge starts", () => {
    expect(startCommand({ inAppliance: true })).toBe("docker compose up -d");
    expect(startCommand({ inAppliance: false })).toBe("npm start (in the checkout)");
  });
});
