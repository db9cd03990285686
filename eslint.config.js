// The house rules that are a linter's job (docs/ARCHITECTURE.md, "House rules as code"): rules chosen for real
// defects, type-aware over everything Node runs. web/*.vue is left to vue-tsc (npm run typecheck:web).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

const NODE_GLOBALS = {
  process: "readonly",
  console: "readonly",
  Buffer: "readonly",
  URL: "readonly",
  URLSearchParams: "readonly",
  setTimeout: "readonly",
  clearTimeout: "readonly",
  setInterval: "readonly",
  clearInterval: "readonly",
  setImmediate: "readonly",
  queueMicrotask: "readonly",
  structuredClone: "readonly",
  fetch: "readonly",
  AbortController: "readonly",
  AbortSignal: "readonly",
  TextEncoder: "readonly",
  TextDecoder: "readonly",
  performance: "readonly",
};

// Where a value crosses an edge (HTTP bodies, MCP messages, worker and child-process messages, plugin
// arguments), an `any` slipping through unchecked is a defect: product code gets the no-unsafe-* rules.
// Tests poke at parsed JSON on purpose, so they keep only the defect rules.
const UNSAFE_AT_THE_EDGES = {
  "@typescript-eslint/no-unsafe-argument": "error",
  "@typescript-eslint/no-unsafe-assignment": "error",
  "@typescript-eslint/no-unsafe-call": "error",
  "@typescript-eslint/no-unsafe-member-access": "error",
  "@typescript-eslint/no-unsafe-return": "error",
};

export default tseslint.config(
  {
    ignores: ["dist/**", "node_modules/**", "web/**", "native/**", "**/*.d.mts", "test/fixtures/**"],
  },
  {
    files: ["**/*.{ts,mts,js,mjs}"],
    extends: [js.configs.recommended],
    languageOptions: {
      globals: NODE_GLOBALS,
      parser: tseslint.parser,
      parserOptions: { project: "./tsconfig.eslint.json", tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "@typescript-eslint": tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "no-unused-vars": "off",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { args: "after-used", argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/await-thenable": "error",
      "@typescript-eslint/require-await": "off",
    },
  },
  {
    // TypeScript itself reports undefined names and redeclarations, with types; the JS rules misread overloads.
    files: ["**/*.{ts,mts}"],
    rules: { "no-undef": "off", "no-redeclare": "off", "no-dupe-class-members": "off" },
  },
  {
    files: ["server/**/*.ts", "plugins/**/*.ts", "testcontainers/**/*.ts"],
    rules: UNSAFE_AT_THE_EDGES,
  },
  {
    // A product module past 400 lines holds two ideas (docs/ARCHITECTURE.md, "House rules as code"): split it.
    files: ["server/**/*.ts"],
    rules: { "max-lines": ["error", { max: 400 }] },
  },
  {
    // A fake's or a bench's async listener (http.createServer(async ...), socket.on("connect", async ...)) that
    // rejects reaches Node's unhandled-rejection handler, which fails the vitest run or ends the bench: the loud
    // outcome a test wants. Product code keeps the whole rule (server/bridge.ts hands Koa's promise on by name).
    files: ["test/**/*.ts", "scripts/bench/**/*.{ts,mjs}"],
    rules: { "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { arguments: false } }] },
  },
  {
    // Matching control characters is these modules' job (terminal escapes, URL evidence, path checks), not a typo.
    files: [
      "server/mutation/terminal/startup-transcript.ts",
      "server/sandbox/path-lexical.ts",
      "server/control/folder-browser.ts",
      "test/gym/*.ts",
    ],
    rules: { "no-control-regex": "off" },
  },
  {
    // Not in any TypeScript program: this file, and image-tag.mjs (its image-tag.d.mts takes its place there).
    files: ["eslint.config.js", "scripts/image-tag.mjs"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { parserOptions: { project: null } },
  },
);
