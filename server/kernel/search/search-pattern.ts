// A /g pattern compiled once for both engines: ripgrep arguments and the JavaScript matchers that give the
// same answers. Literal unless regex=1; an invalid regex comes back with a repair URL that runs it literally.
import { ErrorCode, ToolError } from "../../errors.js";
import type { ExactUrls } from "../tool/definition.js";
import { MAX_PATTERN_CHARS } from "../limits.js";
import { encodeUrlText } from "../../url-grammar/encode.js";
import { escapeForJs, RegexDialectError, translateRegex } from "./regex-dialect.js";

export interface SearchPattern {
  text: string;
  regex: boolean;
  ignoreCase: boolean;
  /** Pattern arguments for rg (after the common flags). */
  rgArgs: string[];
  /** Tests one line (no terminator); its source and flags are what the portable engine runs. */
  line: RegExp;
  /** For literal, case-sensitive patterns: plain substring search is enough. */
  needle: string | undefined;
}

export interface PatternOptions {
  regex: boolean;
  ignoreCase: boolean;
  /** Where the invalid_regex repair URL comes from; undefined outside a URL call. */
  urls?: ExactUrls;
}

function invalidRegex(pattern: string, reason: string, urls: ExactUrls | undefined, index?: number): ToolError {
  const repair = urls?.repair({ set: { key: "regex", value: "0" } });
  return new ToolError(
    ErrorCode.invalidRegex,
    `Invalid regex: ${reason} To search for the text literally, fetch the repair URL (regex=0).`,
    {
      detail: { pattern, reason, ...(index === undefined ? {} : { index }) },
      ...(repair ? { repair } : {}),
    },
  );
}

/** Case flags inside the pattern: the repair searches it without them, with ignoreCase=1. */
function caseFlagsError(pattern: string, error: RegexDialectError, urls: ExactUrls | undefined): ToolError {
  const form = error.ignoreCaseForm!;
  const repair = urls?.repair({
    drop: ["pattern", "grep", "query", "ignoreCase"],
    add: [["ignoreCase", "1"]],
    rawText: encodeUrlText(form),
  });
  return new ToolError(ErrorCode.invalidRegex, `Invalid regex: ${error.message}`, {
    detail: { pattern, reason: error.message, index: error.index, ignoreCasePattern: form },
    ...(repair ? { repair } : {}),
  });
}

export function compileSearchPattern(text: string, options: PatternOptions): SearchPattern {
  if (text.length === 0) {
    throw new ToolError(ErrorCode.missingParameter, "The search text is empty. Put it last: /g?path=src&raw=TODO", {
      detail: { parameter: "pattern" },
    });
  }
  if (text.length > MAX_PATTERN_CHARS) {
    throw new ToolError(
      ErrorCode.invalidParameter,
      `The search text is ${text.length} characters; the limit is ${MAX_PATTERN_CHARS}. Search for a shorter, distinctive part of it.`,
      {
        detail: { parameter: "pattern", limit: MAX_PATTERN_CHARS },
      },
    );
  }
  if (text.includes("\0")) {
    // A NUL cannot reach ripgrep (process arguments are C strings) and never occurs in the text files /g searches.
    throw new ToolError(
      ErrorCode.invalidParameter,
      "Search text cannot contain NUL (~u0000 or %00): remove it and search for the text around it.",
      {
        detail: { parameter: "pattern" },
        retryable: false,
      },
    );
  }
  if (/[\r\n]/.test(text)) {
    throw new ToolError(
      ErrorCode.invalidParameter,
      "Search text must fit on one line: remove ~n / ~r (search for one line of it).",
      {
        detail: { parameter: "pattern" },
      },
    );
  }
  if (!options.regex) {
    const flags = `su${options.ignoreCase ? "i" : ""}`;
    const caseArgs = options.ignoreCase ? ["--ignore-case"] : ["--case-sensitive"];
    const source = escapeForJs(text);
    return {
      text,
      regex: false,
      ignoreCase: options.ignoreCase,
      rgArgs: ["--fixed-strings", ...caseArgs, "--regexp", text],
      line: new RegExp(source, flags),
      needle: options.ignoreCase ? undefined : text,
    };
  }
  let translated;
  try {
    translated = translateRegex(text);
  } catch (error) {
    if (error instanceof RegexDialectError) {
      if (error.ignoreCaseForm !== undefined) throw caseFlagsError(text, error, options.urls);
      throw invalidRegex(text, error.message, options.urls, error.index);
    }
    throw error;
  }
  // Leading (?i) / (?-i) decide the case, as they would in ripgrep; the engines get it as a flag.
  const ignoreCase = translated.ignoreCase ?? options.ignoreCase;
  const flags = `su${ignoreCase ? "i" : ""}`;
  const caseArgs = ignoreCase ? ["--ignore-case"] : ["--case-sensitive"];
  let line: RegExp;
  try {
    line = new RegExp(translated.js, flags);
  } catch (error) {
    throw invalidRegex(text, `${(error as Error).message.replace(/^Invalid regular expression: /, "")}.`, options.urls);
  }
  return {
    text,
    regex: true,
    ignoreCase,
    rgArgs: [...caseArgs, "--regexp", translated.rust],
    line,
    needle: undefined,
  };
}

/** Builds the invalid_regex error for an rg complaint the dialect check did not foresee. */
export function ripgrepRegexError(pattern: SearchPattern, stderr: string, urls: ExactUrls | undefined): ToolError {
  const reason = stderr.replace(/\s+/g, " ").trim().slice(0, 300);
  return invalidRegex(pattern.text, `${reason}.`, urls);
}
