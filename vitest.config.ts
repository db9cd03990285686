import { defineConfig } from "vitest/config";

// e2e needs Docker and runs only through `npm run test:e2e` (vitest.e2e.config.ts).
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/e2e/**", "node_modules/**", "dist/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    setupFiles: ["test/setup.ts"],
    // Builds the sandbox launcher (dist/native/) once per run, so a clean clone's `npm install-test` has it.
    globalSetup: ["test/global-setup.ts"],
    dangerouslyIgnoreUnhandledErrors: false,
  },
});
