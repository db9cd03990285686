// The layers of server/ from top to bottom, as docs/ARCHITECTURE.md lists them ("Layers, as the checker reads
// them"); .dependency-cruiser.cjs turns them into rules and test/unit/house-rules/layers-doc.test.ts keeps the
// two equal. A path ending in / is a folder, any other a file. A module may import its own layer and any below.
module.exports.LAYERS = [
  {
    name: "wiring",
    paths: ["bridge.ts", "listeners.ts", "package-info.ts", "main.ts", "cli.ts", "entry-point.ts", "code-cache.ts"],
  },
  { name: "edges", paths: ["gateway/", "mcp/", "edge/", "control/", "cli/", "tunnel/"] },
  { name: "tool", paths: ["tool/", "plugins/"] },
  { name: "mutation", paths: ["mutation/"] },
  { name: "kernel", paths: ["kernel/", "review/"] },
  {
    name: "foundations",
    paths: [
      "text/",
      "url-grammar/",
      "sandbox/",
      "store/",
      "errors.ts",
      "config.ts",
      "config-env.ts",
      "config-checks.ts",
      "log.ts",
      "failure-backoff.ts",
    ],
  },
];
