// include= for /f and /g: a picomatch glob. Without a "/" it matches file names at any depth (*.ts);
// with one it matches the path relative to the searched directory (src/**/*.ts).
import picomatch from "picomatch";
import { ErrorCode, ToolError } from "../../errors.js";

export interface IncludeFilter {
  glob: string;
  /** `relative` is relative to the searched directory, "/"-separated. */
  matches(relative: string, name: string): boolean;
  /** The glob in a form ripgrep can prefilter with (--type-add), when its meaning is the same there. */
  ripgrepTypeGlob: string | undefined;
}

/** Basename globs made of plain characters, *, ?, [...] and one level of {a,b} read the same in both. */
const PORTABLE_BASENAME_GLOB =
  /^(?!!)(?:[A-Za-z0-9_.*?\- ]|\[[A-Za-z0-9_.-]+\]|\{[A-Za-z0-9_.*?-]+(?:,[A-Za-z0-9_.*?-]+)+\})+$/;

export function createIncludeFilter(glob: string): IncludeFilter {
  if (glob.trim() === "") {
    throw new ToolError(
      ErrorCode.invalidParameter,
      "include= is empty; give a glob such as *.ts, or leave include out.",
      {
        detail: { parameter: "include" },
      },
    );
  }
  let isMatch: (value: string) => boolean;
  try {
    isMatch = picomatch(glob, { dot: true });
  } catch (error) {
    throw new ToolError(
      ErrorCode.invalidParameter,
      `include=${glob} is not a valid glob (${(error as Error).message}). Example: include=*.{ts,tsx}`,
      {
        detail: { parameter: "include", glob },
      },
    );
  }
  const byPath = glob.includes("/");
  return {
    glob,
    matches: (relative, name) => isMatch(byPath ? relative : name),
    ripgrepTypeGlob: !byPath && PORTABLE_BASENAME_GLOB.test(glob) && !glob.includes(":") ? glob : undefined,
  };
}
