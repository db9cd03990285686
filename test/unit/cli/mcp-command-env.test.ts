import { describe, expect, it } from "vitest";
import { parseCommandLine } from "../../../server/cli/args.js";
import { CliError } from "../../../server/cli/cli-error.js";
import { mcpCommandEnv } from "../../../server/cli/mcp-command.js";
import { loadConfig } from "../../../server/config.js";

describe("urlbridge mcp --state-dir / --control-url (the relay started by an MCP client, without our environment)", () => {
  it("finds the state dir and the control plane from the flags, over whatever the environment says", () => {
    const cmd = parseCommandLine([
      "mcp",
      "--state-dir",
      "/srv/ub-state",
      "--control-url",
      "http://127.0.0.1:51234",
      "--session",
      "demo",
    ]);
    const config = loadConfig(
      mcpCommandEnv(cmd, { HOME: "/home/x", URLBRIDGE_STATE_DIR: "/elsewhere", URLBRIDGE_CONTROL_PORT: "47433" }),
    );
    expect(config.stateDir).toBe("/srv/ub-state");
    expect(config.control).toMatchObject({ host: "127.0.0.1", port: 51234 });
  });

  it("takes an IPv6 control URL", () => {
    const cmd = parseCommandLine(["mcp", "--control-url", "http://[::1]:47433", "--session", "demo"]);
    expect(loadConfig(mcpCommandEnv(cmd, { HOME: "/home/x" })).control.host).toBe("::1");
  });

  it("leaves the environment's settings alone without the flags", () => {
    const cmd = parseCommandLine(["mcp", "--session", "demo"]);
    expect(loadConfig(mcpCommandEnv(cmd, { HOME: "/home/x", URLBRIDGE_STATE_DIR: "/elsewhere" })).stateDir).toBe(
      "/elsewhere",
    );
  });

  it.each(["127.0.0.1:47433", "https://127.0.0.1:47433", "http://127.0.0.1"])(
    "refuses --control-url %j as bad usage",
    (url) => {
      const cmd = parseCommandLine(["mcp", "--control-url", url, "--session", "demo"]);
      expect(() => mcpCommandEnv(cmd, {})).toThrow(CliError);
    },
  );

  it("refuses the flags on other commands", () => {
    expect(() => parseCommandLine(["session", "list", "--state-dir", "/srv"])).toThrow(/--state-dir does not apply/);
  });
});
