// `npm run bench`: runs every suite (or those named on the command line) and writes each one's figures
// into docs/PERFORMANCE.md between its markers. Suites run one after another on the same machine.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { writeBetweenMarkers, type BenchResult } from "./harness.js";
import { runCheckpointBench } from "./checkpoint.js";
import { runEconomyBench } from "./economy.js";
import { runExecSearchBench } from "./exec-search.js";
import { runLargeBench } from "./large.js";
import { runMcpBench } from "./mcp.js";
import { runMutationBench } from "./mutation.js";
import { runReadBench } from "./read.js";
import { runStartupBench } from "./startup.js";
import { runPtyBench } from "./pty.js";

const SUITES: Record<string, () => Promise<BenchResult>> = {
  read: runReadBench,
  mutation: runMutationBench,
  mcp: runMcpBench,
  "exec-search": runExecSearchBench,
  startup: runStartupBench,
  economy: runEconomyBench,
  large: runLargeBench,
  pty: runPtyBench,
  checkpoint: runCheckpointBench,
};

const PERFORMANCE_MD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../docs/PERFORMANCE.md");

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((name) => !(name in SUITES));
  if (unknown.length > 0)
    throw new Error(`unknown suite(s) ${unknown.join(", ")}; known: ${Object.keys(SUITES).join(", ")}`);
  for (const name of wanted.length > 0 ? wanted : Object.keys(SUITES)) {
    const result = await SUITES[name]!();
    process.stdout.write(`${result.markdown}\n\n`);
    writeBetweenMarkers(PERFORMANCE_MD, result.suite, result.markdown);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
