import { describe, expect, it } from "vitest";
import {
  buildChildEnv,
  CHILD_ENV_DEFAULTS,
  classifyVariable,
  FALLBACK_PATH,
} from "../../../server/sandbox/env-scrub.js";

describe("classifyVariable", () => {
  it.each([
    ["URLBRIDGE_OPERATOR_TOKEN", "operator-token-value", "prefix"],
    ["URLBRIDGE_OPENCODE_URL", "http://127.0.0.1:4096", "prefix"],
    ["AWS_ACCESS_KEY_ID", "AKIA0000", "prefix"],
    ["AWS_PROFILE", "prod", "prefix"],
    ["AZURE_CLIENT_SECRET", "x", "prefix"],
    ["ARM_CLIENT_SECRET", "x", "prefix"],
    ["GOOGLE_APPLICATION_CREDENTIALS", "/etc/gcp.json", "prefix"],
    ["GCLOUD_PROJECT", "p", "prefix"],
    ["DIGITALOCEAN_ACCESS_TOKEN", "x", "prefix"],
    ["CLOUDFLARE_API_TOKEN", "x", "prefix"],
    ["TUNNEL_TOKEN", "eyJ", "prefix"],
    ["VAULT_ADDR", "https://vault", "prefix"],
    ["GITHUB_TOKEN", "ghp_x", "pattern"],
    ["GH_TOKEN", "ghp_x", "pattern"],
    ["NPM_TOKEN", "npm_x", "pattern"],
    ["NODE_AUTH_TOKEN", "x", "pattern"],
    ["OPENAI_API_KEY", "sk-x", "pattern"],
    ["my_secret", "x", "pattern"],
    ["DB_PASSWORD", "x", "pattern"],
    ["PGPASSWD", "x", "pattern"],
    ["SSH_AUTH_SOCK", "/tmp/ssh-agent.sock", "pattern"],
    ["Credentials_File", "/x", "pattern"],
    ["MYSQL_PWD", "x", "name"],
    ["GIT_ASKPASS", "/usr/bin/helper", "name"],
    ["KUBECONFIG", "/home/u/.kube/config", "name"],
    ["BASH_ENV", "/home/u/.bashrc", "name"],
    ["DATABASE_URL", "postgres://localhost/db", "connection_string"],
    ["SENTRY_DSN", "https://abc@sentry.example/1", "connection_string"],
    ["REDIS_URL", "redis://user:hunter2@cache:6379", "connection_string"],
  ])("removes %s (%s)", (name, value, reason) => {
    expect(classifyVariable(name, value)).toBe(reason);
  });

  it.each([
    ["PATH", "/usr/bin"],
    ["HOME", "/home/u"],
    ["PWD", "/project"],
    ["OLDPWD", "/"],
    ["LANG", "C.UTF-8"],
    ["NODE_EXTRA_CA_CERTS", "/etc/ssl/ca.pem"],
    ["GIT_AUTHOR_NAME", "Ada"],
    ["GIT_AUTHOR_EMAIL", "ada@example.org"],
    ["TOKENIZERS_PARALLELISM", "false"],
    ["HTTP_PROXY", "http://proxy:3128"],
    ["NODE_ENV", "development"],
  ])("keeps %s", (name, value) => {
    expect(classifyVariable(name, value)).toBeUndefined();
  });

  it("removes a variable whose value embeds a known secret, whatever its name", () => {
    expect(classifyVariable("HARMLESS", "Bearer operator-token-value", ["operator-token-value"])).toBe("secret_value");
  });
});

describe("buildChildEnv", () => {
  it("removes secrets, keeps the rest, and reports removed names without values", () => {
    const { env, removed } = buildChildEnv({
      base: {
        PATH: "/opt/bin:/usr/bin",
        HOME: "/home/u",
        URLBRIDGE_OPERATOR_TOKEN: "s3cr3t-value-123",
        GITHUB_TOKEN: "ghp",
        LANG: "C",
      },
    });
    expect(env.PATH).toBe("/opt/bin:/usr/bin");
    expect(env.HOME).toBe("/home/u");
    expect(env.LANG).toBe("C");
    expect(env).not.toHaveProperty("URLBRIDGE_OPERATOR_TOKEN");
    expect(env).not.toHaveProperty("GITHUB_TOKEN");
    expect(removed).toEqual(["GITHUB_TOKEN", "URLBRIDGE_OPERATOR_TOKEN"]);
    expect(JSON.stringify(removed)).not.toContain("s3cr3t");
  });

  it("applies non-interactive defaults over the base values", () => {
    const { env } = buildChildEnv({ base: { TERM: "xterm-256color", PAGER: "less", CI: "" } });
    for (const [name, value] of Object.entries(CHILD_ENV_DEFAULTS)) expect(env[name]).toBe(value);
  });

  it("fills PATH and HOME when the base lacks them", () => {
    const { env } = buildChildEnv({ base: {} });
    expect(env.PATH).toBe(FALLBACK_PATH);
    expect(env.HOME).toBeTruthy();
  });

  it("strips values containing a given secret and ignores short secrets", () => {
    const { env } = buildChildEnv({
      base: { A: "x-operator-token-0123-x", B: "abc" },
      secretValues: ["operator-token-0123", "abc", undefined],
    });
    expect(env).not.toHaveProperty("A");
    expect(env.B).toBe("abc");
  });

  it("applies overrides last", () => {
    const { env } = buildChildEnv({ base: { TERM: "xterm" }, overrides: { TERM: "vt100" } });
    expect(env.TERM).toBe("vt100");
  });
});
