// Converted documents a session is paging through: `next` pages are cut from the copy fetched for page one,
// so a long page costs one download, and every page of it comes from the same version. Bounded in count, bytes
// and age; a miss simply fetches again (the fingerprint then tells the agent whether the document changed).
import { sessionSlot } from "../tool/session-state.js";
import { MAX_WEB_CACHED_DOCUMENTS, MAX_WEB_CACHE_BYTES, WEB_CACHE_TTL_MS } from "./limits.js";

export interface WebDocument {
  finalUrl: string;
  host: string;
  status: number;
  contentType: string;
  charset: string;
  title: string | undefined;
  /** The converted content as UTF-8, what pages are cut from. */
  bytes: Buffer;
  fingerprint: string;
  downloadTruncated: boolean;
  notice: string | undefined;
}

interface Entry {
  document: WebDocument;
  at: number;
}

class DocumentCache {
  private readonly entries = new Map<string, Entry>();
  private total = 0;

  get(key: string, now: number): WebDocument | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (now - entry.at > WEB_CACHE_TTL_MS) {
      this.delete(key);
      return undefined;
    }
    return entry.document;
  }

  set(key: string, document: WebDocument, now: number): void {
    this.delete(key);
    if (document.bytes.length > MAX_WEB_CACHE_BYTES) return;
    this.entries.set(key, { document, at: now });
    this.total += document.bytes.length;
    while (this.entries.size > MAX_WEB_CACHED_DOCUMENTS || this.total > MAX_WEB_CACHE_BYTES)
      this.delete(this.entries.keys().next().value as string);
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.total -= entry.document.bytes.length;
  }
}

export const webDocuments = sessionSlot(() => new DocumentCache());

export const documentKey = (url: string, format: string) => `${format} ${url}`;
