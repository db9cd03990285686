// Builds the environment a terminal child runs with: the bridge's own environment minus anything that looks
// like a credential, plus defaults that keep tools non-interactive and their output plain.
import os from "node:os";

/** Name fragments that mark a variable as secret-bearing (matched case-insensitively anywhere in the name). */
export const SECRET_NAME_PATTERN =
  /token|secret|passw(?:or)?d|passphrase|key|credential|auth|cookie|session_?id|private/i;

/**
 * Whole families removed by prefix: our own configuration (it holds the operator token and plugin
 * credentials) and cloud/provider credentials whose individual names do not always look secret
 * (AWS_ACCESS_KEY_ID does, AWS_PROFILE + a mounted config does not).
 */
export const SECRET_NAME_PREFIXES = [
  "URLBRIDGE_",
  "AWS_",
  "AZURE_",
  "ARM_",
  "GCP_",
  "GCLOUD_",
  "CLOUDSDK_",
  "GOOGLE_",
  "DIGITALOCEAN_",
  "CLOUDFLARE_",
  "CF_",
  "TUNNEL_",
  "HEROKU_",
  "VAULT_",
  "OP_",
] as const;

/** Single names that grant access without matching the patterns above. */
export const SECRET_NAMES = new Set([
  "MYSQL_PWD",
  "GIT_ASKPASS",
  "SSH_ASKPASS",
  "SUDO_ASKPASS",
  "XAUTHORITY",
  "NETRC",
  "PGPASSFILE",
  "PGSERVICEFILE",
  "KUBECONFIG",
  "DOCKER_CONFIG",
  // Not secrets, but shell start-up hooks: a non-interactive bash sources $BASH_ENV (sh: $ENV) before the
  // command, which could re-export what we just removed.
  "BASH_ENV",
  "ENV",
]);

/**
 * Names that match SECRET_NAME_PATTERN but carry no secret and are useful to builds. Kept deliberately
 * short; every entry says why. SSH_AUTH_SOCK is NOT here: the agent socket lets a child sign as the
 * operator (push to any remote the operator can), which is a live credential.
 */
export const HARMLESS_NAMES = new Map<string, string>([
  ["GIT_AUTHOR_NAME", "commit identity, not a credential"],
  ["GIT_AUTHOR_EMAIL", "commit identity, not a credential"],
  ["GIT_AUTHOR_DATE", "commit timestamp"],
  ["TOKENIZERS_PARALLELISM", "a HuggingFace threading switch"],
  ["KEYTIMEOUT", "a zsh key-sequence delay"],
]);

/** Name suffixes whose values are connection strings that usually embed a password. */
const CONNECTION_STRING_SUFFIXES = ["_DSN", "DATABASE_URL", "_CONNECTION_STRING"];

/** A URL with user:password@ userinfo, anywhere in a value. */
const URL_WITH_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^\s/@:]+:[^\s/@]+@/i;

/** Defaults that make children non-interactive and their output plain text; applied after scrubbing. */
export const CHILD_ENV_DEFAULTS: Readonly<Record<string, string>> = {
  CI: "1",
  NO_COLOR: "1",
  FORCE_COLOR: "0",
  TERM: "dumb",
  PAGER: "cat",
  GIT_PAGER: "cat",
  GIT_TERMINAL_PROMPT: "0",
  DEBIAN_FRONTEND: "noninteractive",
  npm_config_yes: "true",
  npm_config_fund: "false",
  npm_config_update_notifier: "false",
};

/** Used when the bridge's own PATH is missing or empty. */
export const FALLBACK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Values shorter than this are not searched for inside other variables (too many false positives). */
const MIN_SECRET_VALUE_LENGTH = 8;

export interface ChildEnvOptions {
  /** The environment to start from; the bridge's own by default. */
  base?: NodeJS.ProcessEnv;
  /** Known secret values (e.g. the operator token): any variable whose value contains one is removed. */
  secretValues?: Array<string | undefined>;
  /** Set last, after scrubbing and defaults (the caller vouches for them). */
  overrides?: Record<string, string>;
}

export interface ChildEnv {
  env: Record<string, string>;
  /** Names removed, for the operator log (never the values). */
  removed: string[];
}

export type SecretReason = "prefix" | "name" | "pattern" | "connection_string" | "secret_value";

/** Why a variable would be removed, or undefined when it may pass to the child. */
export function classifyVariable(name: string, value: string, secretValues: string[] = []): SecretReason | undefined {
  const upper = name.toUpperCase();
  if (SECRET_NAME_PREFIXES.some((prefix) => upper.startsWith(prefix))) return "prefix";
  if (SECRET_NAMES.has(upper)) return "name";
  if (!HARMLESS_NAMES.has(upper) && SECRET_NAME_PATTERN.test(name)) return "pattern";
  if (CONNECTION_STRING_SUFFIXES.some((suffix) => upper.endsWith(suffix)) || URL_WITH_PASSWORD.test(value))
    return "connection_string";
  if (secretValues.some((secret) => value.includes(secret))) return "secret_value";
  return undefined;
}

/** The scrubbed environment for a terminal child. Pass it with extendEnv: false so nothing leaks back in. */
export function buildChildEnv(options: ChildEnvOptions = {}): ChildEnv {
  const base = options.base ?? process.env;
  const secretValues = (options.secretValues ?? []).filter(
    (v): v is string => typeof v === "string" && v.length >= MIN_SECRET_VALUE_LENGTH,
  );
  const env: Record<string, string> = {};
  const removed: string[] = [];
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue;
    if (classifyVariable(name, value, secretValues)) removed.push(name);
    else env[name] = value;
  }
  Object.assign(env, CHILD_ENV_DEFAULTS);
  if (!env.PATH) env.PATH = FALLBACK_PATH;
  if (!env.HOME) env.HOME = safeHomedir();
  Object.assign(env, options.overrides ?? {});
  return { env, removed: removed.sort() };
}

function safeHomedir(): string {
  try {
    return os.homedir();
  } catch {
    return os.tmpdir();
  }
}
