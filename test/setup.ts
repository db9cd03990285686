// Runs in every test file's worker: whatever makeTempDir created is removed once the file's own
// afterAll hooks (which close bridges and servers) have run, so repeated runs leave /tmp as they found it.
import { afterAll } from "vitest";
import { removeTempDirs } from "./helpers/bridge.js";

afterAll(() => removeTempDirs());
