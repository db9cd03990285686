// A real process that stages a large review content (store/changes.ts stageAhead: sealed chunks, each its own
// commit, ahead of the record) and is killed by the test between chunk writes, before any record names them.
// Usage: node --import tsx review-chunk-stager.ts <state dir> <bytes>
import { randomBytes } from "node:crypto";
import { openStore } from "../../../server/store/index.js";

const [stateDir, bytes] = process.argv.slice(2);
const store = openStore(stateDir!);
process.stdout.write("open\n");
// Bounded: should the test fail to kill it, it ends by itself without recording anything.
setTimeout(() => process.exit(2), 60_000).unref();
await store.changes.stageAhead([{ path: "/project/big.log", after: { content: randomBytes(Number(bytes)) } }]);
process.stdout.write("staged\n");
