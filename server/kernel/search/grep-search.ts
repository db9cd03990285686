// Picks the /g engine: ripgrep when it is on PATH (or forced), else the portable engine. Both feed the
// same collector, so the choice shows only in the `engine` field of the answer.
import { ErrorCode, ToolError } from "../../errors.js";
import { locateExecutable } from "../read/executables.js";
import type { MatchCollector } from "./grep-collect.js";
import { searchWithFallback } from "./grep-fallback.js";
import { RegexWorker } from "./regex-worker.js";
import { RipgrepSearchedNothing, RipgrepUnavailable, searchWithRipgrep } from "./ripgrep.js";
import { probeRipgrepConfinement, type RipgrepConfinement } from "./ripgrep-confine.js";
import type { GrepSearch } from "./grep-request.js";

export type GrepEngineSetting = "auto" | "rg" | "fallback";
export type GrepEngineName = "rg" | "fallback";

export interface GrepEngine {
  /** Runs the search; returns the engine that answered. */
  run(search: GrepSearch, collector: MatchCollector): Promise<GrepEngineName>;
}

/** rg on PATH, and how it runs: confined when the launcher and Landlock allow it, else only when forced. */
interface Ripgrep {
  path: string;
  confinement: RipgrepConfinement | undefined;
}

/**
 * "auto" uses rg only where it can be confined to the checked target (ripgrep-confine.ts), else the portable
 * engine, which walks by descriptor and is race-free everywhere. "rg" uses rg regardless (unconfined where
 * Landlock is missing: docs/SECURITY.md says what stays racy then).
 */
export function createGrepEngine(setting: GrepEngineSetting): GrepEngine {
  let ripgrep: Promise<Ripgrep | undefined> | undefined;
  const locate = async (): Promise<Ripgrep | undefined> => {
    if (setting === "fallback") return undefined;
    const found = await locateExecutable("rg");
    if (!found) return undefined;
    const confinement = await probeRipgrepConfinement(found);
    if (!confinement && setting === "auto") return undefined;
    return { path: found, confinement };
  };
  const findRipgrep = () => (ripgrep ??= locate());
  const worker = new RegexWorker();
  return {
    async run(search, collector) {
      const rg = await findRipgrep();
      if (!rg) {
        if (setting === "rg") {
          throw new ToolError(
            ErrorCode.grepEngineUnavailable,
            "URLBRIDGE_GREP_ENGINE=rg but rg is not on the bridge's PATH. The operator can install ripgrep or unset the variable.",
            {
              retryable: false,
              agentAction: "stop",
            },
          );
        }
        await searchWithFallback(search, collector, worker);
        return "fallback";
      }
      try {
        await searchWithRipgrep(rg.path, search, collector, rg.confinement);
        return "rg";
      } catch (error) {
        if (error instanceof RipgrepSearchedNothing) {
          // Nothing was collected, so the portable engine answers this search from scratch (see the class).
          await searchWithFallback(search, collector, worker);
          return "fallback";
        }
        if (!(error instanceof RipgrepUnavailable) || setting === "rg") throw error;
        ripgrep = Promise.resolve(undefined);
        await searchWithFallback(search, collector, worker);
        return "fallback";
      }
    },
  };
}
