// Capabilities at rest: the database holds only a keyed digest of each capability token (for lookup) and the
// token sealed with AES-256-GCM (so the control plane can show Init URLs). The key lives beside the database in
// <state>/capability-key (0600), never in it, so a copied database or backup yields no usable URL.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { writeFileDurably } from "./durable-file.js";

export const CAPABILITY_KEY_FILE = "capability-key";
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Binds every sealed value to this use, so it cannot be replayed as another kind of secret. */
const SEAL_AAD = Buffer.from("urlbridge capability token v1", "utf8");

export interface CapabilitySealer {
  /** HMAC-SHA256 of the token under the lookup subkey: the only form the database indexes. */
  digest(token: string): Buffer;
  /** iv (12) | tag (16) | ciphertext, under the sealing subkey. */
  seal(token: string): Buffer;
  /** The token, or undefined when the value was sealed under another key or altered. */
  open(sealed: Buffer): string | undefined;
  /**
   * File contents kept for review (store/changes.ts), sealed under their own subkey: a file the agent wrote may hold
   * its own capability URL, and no live capability is kept at rest in the clear (docs/SECURITY.md).
   */
  sealBytes(content: Buffer): Buffer;
  /**
   * The same sealed form as sealBytes, for large contents, cut apart: the ciphertext handed to `onSlice` a slice per
   * event-loop turn (node:crypto has no asynchronous cipher), so a 10 MB file does not hold every other session's
   * call for the whole of it; resolves to iv | tag once the last slice is out. That header, then the slices in
   * order, is what sealBytes would have given.
   */
  sealBytesInSlices(content: Buffer, onSlice: (slice: Buffer, index: number) => void): Promise<Buffer>;
  /** The content, or undefined when it was sealed under another key or altered. */
  openBytes(sealed: Buffer): Buffer | undefined;
  /** A digest of the key itself, stored in the database to notice a key that does not belong to it. */
  keyId: string;
}

const CONTENT_AAD = Buffer.from("urlbridge review content v1", "utf8");

function sealWith(key: Buffer, aad: Buffer, plain: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(aad);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** Bytes encrypted per event-loop turn by sealInSlices: well under a millisecond of AES-GCM. */
export const SEAL_SLICE_BYTES = 512 * 1024;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** sealWith's output (iv | tag | ciphertext): the ciphertext to `onSlice` SEAL_SLICE_BYTES a turn, iv | tag returned. */
async function sealInSlices(
  key: Buffer,
  aad: Buffer,
  plain: Buffer,
  onSlice: (slice: Buffer, index: number) => void,
): Promise<Buffer> {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(aad);
  let index = 0;
  for (let at = 0; at < plain.length; at += SEAL_SLICE_BYTES) {
    if (at > 0) await nextTurn();
    onSlice(cipher.update(plain.subarray(at, at + SEAL_SLICE_BYTES)), index++);
  }
  // GCM is a stream mode: final() gives nothing more, but a cipher that did would still be stored whole.
  const tail = cipher.final();
  if (tail.length > 0) onSlice(tail, index);
  return Buffer.concat([iv, cipher.getAuthTag()]);
}

function openWith(key: Buffer, aad: Buffer, sealed: Buffer): Buffer | undefined {
  if (sealed.length < IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(0, IV_BYTES)).setAAD(aad);
    decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  } catch {
    return undefined;
  }
}

export function capabilityKeyPath(stateDir: string): string {
  return path.join(stateDir, CAPABILITY_KEY_FILE);
}

/**
 * What to do about a key file that is not a key: restore the copy deploy/UPGRADE.md has the operator keep, since
 * deleting it (the only other way out) gives every session new URLs.
 */
export function damagedKeyMessage(file: string, length: number): string {
  return (
    `${file} holds ${length} bytes, not ${KEY_BYTES}: the capability key is damaged, and without it no session's URL can be opened. ` +
    `Restore it: stop the bridge, copy the capability-key you kept apart from your backups (deploy/UPGRADE.md "Backups") to ${file} with mode 0600, and start again; ` +
    "`urlbridge restore <backup> --key <that copy>` installs it together with a backup. " +
    `Only if no copy exists anywhere, delete ${file}: the bridge then makes a new key and every session gets new URLs.`
  );
}

/**
 * Reads <state>/capability-key, creating it (32 random bytes, 0600) on first start, durably (durable-file.ts): a
 * crash right after the first start leaves no key or the whole key, never an empty file beside sealed sessions.
 */
export function loadCapabilityKey(stateDir: string): { key: Buffer; created: boolean } {
  const file = capabilityKeyPath(stateDir);
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  // A restart finds it: no temp file written, fsynced and linked in vain (~7 ms of every start, issue 34).
  if (!fs.existsSync(file)) {
    try {
      // Exclusive: never replace a key another process created in the meantime.
      writeFileDurably(file, randomBytes(KEY_BYTES), { mode: 0o600, exclusive: true });
      return { key: fs.readFileSync(file), created: true };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  const key = fs.readFileSync(file);
  if (key.length !== KEY_BYTES) throw new Error(damagedKeyMessage(file, key.length));
  fs.chmodSync(file, 0o600);
  return { key, created: false };
}

const subkey = (key: Buffer, info: string) => Buffer.from(hkdfSync("sha256", key, Buffer.alloc(0), info, KEY_BYTES));

export function createCapabilitySealer(key: Buffer): CapabilitySealer {
  const lookupKey = subkey(key, "urlbridge capability lookup v1");
  const sealKey = subkey(key, "urlbridge capability seal v1");
  const contentKey = subkey(key, "urlbridge review content seal v1");
  return {
    sealBytes: (content) => sealWith(contentKey, CONTENT_AAD, content),
    sealBytesInSlices: (content, onSlice) => sealInSlices(contentKey, CONTENT_AAD, content, onSlice),
    openBytes: (sealed) => openWith(contentKey, CONTENT_AAD, sealed),
    digest: (token) => createHmac("sha256", lookupKey).update(token, "utf8").digest(),
    seal(token) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", sealKey, iv).setAAD(SEAL_AAD);
      const body = Buffer.concat([cipher.update(token, "utf8"), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]);
    },
    open(sealed) {
      if (sealed.length <= IV_BYTES + TAG_BYTES) return undefined;
      try {
        const decipher = createDecipheriv("aes-256-gcm", sealKey, sealed.subarray(0, IV_BYTES)).setAAD(SEAL_AAD);
        decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
          "utf8",
        );
      } catch {
        return undefined;
      }
    },
    keyId: createHmac("sha256", lookupKey).update("urlbridge capability key id", "utf8").digest("hex").slice(0, 16),
  };
}
