// The layering rule of docs/ARCHITECTURE.md, run by `npm run lint` (npm test): dependencies point down the layer
// list in scripts/layers.cjs, the two edges that serve agents share through edge/ instead of importing each
// other, every server module sits in a layer, and no module imports itself back at runtime.
const { LAYERS } = require("./scripts/layers.cjs");

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const pattern = (paths) => `^server/(?:${paths.map((p) => escape(p) + (p.endsWith("/") ? "" : "$")).join("|")})`;

const layerRules = LAYERS.slice(1).map((layer, i) => ({
  name: `layer-${layer.name}`,
  comment: `${layer.name} builds on the layers below it, never on ${LAYERS.slice(0, i + 1)
    .map((l) => l.name)
    .join(", ")}`,
  severity: "error",
  from: { path: pattern(layer.paths) },
  to: { path: pattern(LAYERS.slice(0, i + 1).flatMap((l) => l.paths)) },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: "edges-apart",
      comment: "the URL gateway and the MCP edge share through edge/; neither imports the other's modules",
      severity: "error",
      from: { path: "^server/mcp/" },
      to: { path: "^server/gateway/" },
    },
    {
      name: "edges-apart-gateway",
      comment: "the data plane mounts MCP through mcp/route.ts alone (it loads the SDK on first use)",
      severity: "error",
      from: { path: "^server/gateway/" },
      to: { path: "^server/mcp/", pathNot: "^server/mcp/route\\.ts$" },
    },
    {
      name: "in-a-layer",
      comment: "every module under server/ belongs to a layer of scripts/layers.cjs (and docs/ARCHITECTURE.md)",
      severity: "error",
      from: { path: "^server/", pathNot: pattern(LAYERS.flatMap((l) => l.paths)) },
      to: {},
    },
    {
      name: "no-cycle",
      comment: "no module reaches itself again at runtime (a cycle through type imports alone is erased)",
      severity: "error",
      from: { path: "^server/" },
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
    },
  ],
  options: {
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|dist)/" },
  },
};
