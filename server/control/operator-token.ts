// The operator credential: from URLBRIDGE_OPERATOR_TOKEN, else generated once into <state>/operator-token (0600).
// The token itself is never logged; only where it lives and how to print it.
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Logger } from "../log.js";
import { writeFileDurably } from "../store/durable-file.js";
import { operatorTokenWeakness } from "../config-checks.js";

export const OPERATOR_TOKEN_FILE = "operator-token";
/** A generated token: 32 random bytes (256 bits), base64url. */
export const GENERATED_TOKEN_BYTES = 32;

export interface OperatorCredential {
  /** Where the token came from, for the login page and logs. */
  source: "env" | "file";
  /** Path of the token file when source is file. */
  file: string | undefined;
  /** Constant-time comparison against a presented token. */
  matches(presented: string): boolean;
  /**
   * A key derived from this token that login sessions are bound to (login-sessions.ts): a cookie made under one
   * token is unknown under the next, so replacing the token logs every browser out (issue 28, item 5).
   */
  loginBinding: Buffer;
}

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

export function operatorTokenPath(stateDir: string): string {
  return path.join(stateDir, OPERATOR_TOKEN_FILE);
}

/** Reads the token file without creating it (the CLI); undefined when there is none yet. */
export function readOperatorTokenFile(stateDir: string): string | undefined {
  try {
    const token = fs.readFileSync(operatorTokenPath(stateDir), "utf8").trim();
    return token.length > 0 ? token : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Reads the token file, or creates it with a fresh random token, durably (store/durable-file.ts): a crash right after
 * the first start leaves no file or the whole token, never an empty file that the next start silently replaces.
 */
export function readOrCreateOperatorToken(stateDir: string): { token: string; created: boolean } {
  const file = operatorTokenPath(stateDir);
  try {
    const token = fs.readFileSync(file, "utf8").trim();
    if (token.length > 0) {
      const weakness = operatorTokenWeakness(token);
      if (weakness)
        throw new Error(
          `The operator token in ${file} is too weak: ${weakness}. Delete the file to have a new one generated at start.`,
        );
      return { token, created: false };
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const token = randomBytes(GENERATED_TOKEN_BYTES).toString("base64url");
  writeFileDurably(file, `${token}\n`, { mode: 0o600, exclusive: false });
  return { token, created: true };
}

/** `showCommand`: how the operator prints the token here (server/cli/invocation.ts), named in the log. */
export function loadOperatorCredential(
  stateDir: string,
  fromEnv: string | undefined,
  log: Logger,
  showCommand = "urlbridge token --show",
): OperatorCredential {
  let token: string;
  let source: OperatorCredential["source"];
  if (fromEnv) {
    token = fromEnv;
    source = "env";
    log.info("operator token: taken from URLBRIDGE_OPERATOR_TOKEN");
  } else {
    const result = readOrCreateOperatorToken(stateDir);
    token = result.token;
    source = "file";
    log.info(
      `operator token: ${result.created ? "generated into" : "read from"} ${operatorTokenPath(stateDir)} (print it with \`${showCommand}\`)`,
    );
  }
  const expected = digest(token);
  return {
    source,
    file: source === "file" ? operatorTokenPath(stateDir) : undefined,
    matches: (presented) => timingSafeEqual(digest(presented), expected),
    loginBinding: createHmac("sha256", token).update("urlbridge login sessions v1", "utf8").digest(),
  };
}
