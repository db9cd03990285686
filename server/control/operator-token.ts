// The operator credential: from URLBRIDGE_OPERATOR_TOKEN, else generated once into <state>/operator-token (0600).
// The token itself is never logged; only where it lives and how to print it.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Logger } from "../log.js";

export const OPERATOR_TOKEN_FILE = "operator-token";

export interface OperatorCredential {
  /** Where the token came from, for the login page and logs. */
  source: "env" | "file";
  /** Path of the token file when source is file. */
  file: string | undefined;
  /** Constant-time comparison against a presented token. */
  matches(presented: string): boolean;
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

/** Reads the token file, or creates it with a fresh random token. */
export function readOrCreateOperatorToken(stateDir: string): { token: string; created: boolean } {
  const file = operatorTokenPath(stateDir);
  try {
    const token = fs.readFileSync(file, "utf8").trim();
    if (token.length >= 16) return { token, created: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const token = randomBytes(24).toString("base64url");
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${token}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
  return { token, created: true };
}

export function loadOperatorCredential(stateDir: string, fromEnv: string | undefined, log: Logger): OperatorCredential {
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
    log.info(`operator token: ${result.created ? "generated into" : "read from"} ${operatorTokenPath(stateDir)} (print it with \`urlbridge token --show\`)`);
  }
  const expected = digest(token);
  return {
    source,
    file: source === "file" ? operatorTokenPath(stateDir) : undefined,
    matches: (presented) => timingSafeEqual(digest(presented), expected),
  };
}
