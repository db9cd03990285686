import { defineConfig } from "vitest/config";
import { imageTag } from "./scripts/image-tag.mjs";

const BRIDGE_IMAGE = imageTag(import.meta.dirname);

// The Docker appliance end to end (`npm run test:e2e`): builds images and starts containers through
// testcontainers, so it runs sequentially with generous timeouts. Offline machines cannot pull the
// testcontainers reaper, hence the two defaults below (see ../shared/docker/README.md); clean up is
// done by the tests themselves.
export default defineConfig({
  test: {
    // examples/: tests written as a user of the package writes them (urlbridge/testcontainers by package name).
    include: ["test/e2e/**/*.test.ts", "examples/**/*.test.ts"],
    exclude: ["node_modules/**", "dist/**"],
    testTimeout: 180_000,
    hookTimeout: 1_200_000,
    pool: "forks",
    globalSetup: ["test/e2e/global-setup.ts"],
    fileParallelism: false,
    maxWorkers: 1,
    env: {
      TESTCONTAINERS_RYUK_DISABLED: process.env.TESTCONTAINERS_RYUK_DISABLED ?? "true",
      TESTCONTAINERS_HOST_OVERRIDE: process.env.TESTCONTAINERS_HOST_OVERRIDE ?? "localhost",
      // The content tag global-setup.ts builds: the default image of urlbridge/testcontainers in every file.
      URLBRIDGE_IMAGE: process.env.URLBRIDGE_IMAGE ?? BRIDGE_IMAGE,
    },
  },
});
