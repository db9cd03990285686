// The commands the README, docs/CONTROL_PLANE.md and the CLI's hints give an operator, read from the files
// themselves so a test can run or check each one (test/docs/commands.test.ts, test/e2e/readme-compose.test.ts).
// Every shell block says on its fence how it is tested: ```bash test=run | serve | docker | ci.
import fs from "node:fs";
import path from "node:path";
import { parseCommandLine } from "../../server/cli/args.js";

export const REPO_ROOT = path.resolve(import.meta.dirname, "..", "..");
export const COMMAND_DOCS = ["README.md", "docs/CONTROL_PLANE.md"] as const;

/**
 * run: executed in order against a temp install (the serve block's server) in a private network namespace.
 * serve: starts that server. docker: checked against `docker compose config` (and its lines run where safe) by
 * the e2e suite, statically here. ci: commands .ci/run runs.
 */
export const TEST_MODES = ["run", "serve", "docker", "ci"] as const;
export type TestMode = (typeof TEST_MODES)[number];
const SHELL_LANGUAGES = new Set(["bash", "sh", "shell", "console", "zsh"]);

export interface ShellBlock {
  file: string;
  line: number;
  mode: TestMode | undefined;
  /** The raw `test=` value, to report an unknown one. */
  declared: string | undefined;
  text: string;
}

/** Fenced blocks whose language is a shell, with their `test=` mode; blockquoted fences (`> ```) count too. */
export function shellBlocks(
  file: string,
  markdown = fs.readFileSync(path.join(REPO_ROOT, file), "utf8"),
): ShellBlock[] {
  const lines = markdown.split("\n");
  const out: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(>\s?)?```(\S*)(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const quote = open[1] ?? "";
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !lines[j]!.startsWith(`${quote}\`\`\``); j++) body.push(lines[j]!.slice(quote.length));
    if (SHELL_LANGUAGES.has(open[2]!)) {
      const declared = /\btest=(\S+)/.exec(open[3]!)?.[1];
      const mode = TEST_MODES.find((m) => m === declared);
      out.push({ file, line: i + 1, mode, declared, text: body.join("\n") });
    }
    i = j;
  }
  return out;
}

/** The block's commands, one per entry: comments dropped, `\` continuations joined. */
export function commandsOf(text: string): string[] {
  const out: string[] = [];
  let pending = "";
  for (const raw of text.split("\n")) {
    const line = pending + raw.replace(/\s+#(?=[^'"]*$).*$/, "").trimEnd();
    if (line.endsWith("\\")) {
      pending = `${line.slice(0, -1)} `;
      continue;
    }
    pending = "";
    if (line.trim() && !line.trim().startsWith("#")) out.push(line.trim());
  }
  return out;
}

/** Inline code spans that are commands: `docker compose ...`, `npx urlbridge ...`, `urlbridge ...`, `npm ...`. */
export function inlineCommands(file: string, markdown = fs.readFileSync(path.join(REPO_ROOT, file), "utf8")): string[] {
  const withoutFences = markdown.replace(/^(>\s?)?```[\s\S]*?^(>\s?)?```/gm, "");
  const spans = [...withoutFences.replace(/\n>?\s*/g, " ").matchAll(/`([^`]+)`/g)].map((m) => m[1]!.trim());
  return spans.filter((s) => /^(docker compose |npx urlbridge\b|urlbridge |npm )/.test(s));
}

const PLACEHOLDERS: Record<string, string> = {
  "<name>": "demo",
  "<root>": "/projects/demo",
  "<project>": "demo",
  "<project-name-or-id>": "demo",
  "<session-id>": "s_1",
  "<session-name-or-id>": "demo-1",
};

/**
 * Whether `urlbridge <args>` is a command the CLI accepts (placeholders filled in; `...` is a prose ellipsis
 * and `[--flag]` an optional part, both accepted as the bare command). Returns the usage error, if any.
 */
export function cliProblem(args: string): string | undefined {
  if (args.trim() === "...") return undefined;
  const filled = args
    .replace(/\[[^\]]*\]/g, "")
    .replace(/<[^>]+>/g, (p) => PLACEHOLDERS[p] ?? "x")
    .trim();
  try {
    parseCommandLine(filled.split(/\s+/).filter(Boolean));
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** docker compose options that take a value (the word after them is not a subcommand or service). */
const VALUE_OPTIONS = new Set([
  "-f",
  "--file",
  "--profile",
  "-p",
  "--project-name",
  "--env-file",
  "--project-directory",
]);

/** The profiles compose.yaml's services declare (`profiles: [a, b]` or a `- a` list under `profiles:`). */
export function composeProfiles(): string[] {
  const yaml = fs.readFileSync(path.join(REPO_ROOT, "compose.yaml"), "utf8");
  const out = new Set<string>();
  for (const m of yaml.matchAll(/^\s+profiles:\s*\[([^\]]*)\]/gm))
    for (const name of m[1]!.split(",")) out.add(name.trim().replace(/^["']|["']$/g, ""));
  for (const m of yaml.matchAll(/^(\s+)profiles:\s*\n((?:\1\s+-\s*\S+\s*\n)+)/gm))
    for (const item of m[2]!.matchAll(/-\s*(\S+)/g)) out.add(item[1]!.replace(/^["']|["']$/g, ""));
  return [...out];
}

/** The services compose.yaml defines (top-level `services:` keys; two-space indented names). */
export function composeServices(): string[] {
  const yaml = fs.readFileSync(path.join(REPO_ROOT, "compose.yaml"), "utf8");
  const section = yaml.split(/^services:\s*$/m)[1]!.split(/^\S/m)[0]!;
  return [...section.matchAll(/^ {2}([a-z][\w-]*):\s*$/gm)].map((m) => m[1]!);
}

const DOCKER_SUBCOMMANDS = new Set(["up", "ps", "logs", "exec", "config", "down", "pull", "build", "restart", "stop"]);

/** What is wrong with a `docker compose ...` command line as documented, or undefined. */
export function dockerProblem(command: string): string | undefined {
  // Shell redirections (`> backup.sqlite`, `2>&1`) belong to the host's shell, not to the command; `<name>` is a placeholder.
  const words = command.replace(/\s+\d*(?:>>?|<(?![^\s>]+>))&?\s*\S+/g, "").split(/\s+/);
  if (words[0] !== "docker" || words[1] !== "compose") return "not a docker compose command";
  const after = words.slice(2);
  const rest = after.filter((w, i, all) => !(w.startsWith("-") || (i > 0 && VALUE_OPTIONS.has(all[i - 1]!))));
  for (let i = 0; i < after.length - 1; i++) {
    if (after[i] === "--profile" && !composeProfiles().includes(after[i + 1]!))
      return `--profile ${after[i + 1]}, which no compose.yaml service declares`;
  }
  const sub = rest[0];
  if (!sub || !DOCKER_SUBCOMMANDS.has(sub)) return `unknown docker compose subcommand "${sub}"`;
  const services = composeServices();
  if (sub === "exec") {
    const service = rest[1];
    if (!service || !services.includes(service))
      return `exec names service "${service}", which compose.yaml does not define`;
    const inContainer = words.slice(words.indexOf(service) + 1).join(" ");
    // Host-side expansions would name a host path inside the container (issue 16: ~/code/demo).
    if (/(^|\s)~|\$PWD|\$HOME/.test(inContainer)) return `"${inContainer}" expands on the host, not in the container`;
    if (!inContainer.startsWith("urlbridge ")) return `exec runs "${inContainer}", not urlbridge`;
    return cliProblem(inContainer.slice("urlbridge ".length));
  }
  for (const name of rest.slice(1).filter((w) => !w.startsWith("-"))) {
    if (!services.includes(name)) return `names service "${name}", which compose.yaml does not define`;
  }
  return undefined;
}

/** Lines like `Next: <command>` and `Print it with: <command>` in the CLI's output: its hints. */
export function hintsIn(output: string): string[] {
  return [...output.matchAll(/^(?:Next|Print it with|[^\n]*Add one with|[^\n]*Create one with): (.+)$/gm)].map((m) =>
    m[1]!.trim(),
  );
}
