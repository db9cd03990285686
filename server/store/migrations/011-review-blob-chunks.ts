// Review contents stored in chunks (issue 34): a large side's sealed bytes are written a bounded chunk per
// event-loop turn, each its own commit, before the record's transaction, which then only names them
// (review_blobs.chunk_stage, its content the seal's iv | tag). Chunks no blob names are a staging a crash cut
// short: swept when the store opens. A blob's chunks go with it (the trigger), whatever deletes it.
import type { Migration } from "./index.js";

export const reviewBlobChunksSchema: Migration = {
  version: 11,
  name: "review-blob-chunks",
  sql: `
    CREATE TABLE review_blob_chunks (
      id INTEGER PRIMARY KEY,
      stage TEXT NOT NULL,
      seq INTEGER NOT NULL,
      content BLOB NOT NULL,
      UNIQUE (stage, seq)
    );
    ALTER TABLE review_blobs ADD COLUMN chunk_stage TEXT;
    CREATE INDEX review_blobs_chunk_stage ON review_blobs(chunk_stage) WHERE chunk_stage IS NOT NULL;
    CREATE TRIGGER review_blobs_chunks_go AFTER DELETE ON review_blobs WHEN OLD.chunk_stage IS NOT NULL
    BEGIN
      DELETE FROM review_blob_chunks WHERE stage = OLD.chunk_stage;
    END;
  `,
};
