// TEST-ONLY plugin, never shipped: a "notes" plugin with read and mutation tools that touch real files
// under the call's authority, so the plugin tests can count executions on disk and see the authority a call
// got. It exercises the plugin host exactly as a bundled plugin would (server/plugins/definition.ts).
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { definePluginTool, type Plugin } from "../../server/plugins/definition.js";

const noteName = z.string().regex(/^[a-z0-9-]{1,32}\.txt$/, "name must look like todo.txt");

export const noteReadOutput = z.strictObject({
  ok: z.literal(true),
  name: z.string(),
  text: z.string(),
  root: z.string(),
});
export const noteAppendOutput = z.strictObject({ ok: z.literal(true), name: z.string(), lines: z.number().int() });
export const listOutput = z.strictObject({ ok: z.literal(true), root: z.string(), entries: z.array(z.string()) });

export function notesPlugin(): Plugin {
  return {
    id: "notes",
    title: "Notes (test plugin)",
    description: "Reads and appends lines to notes/<name> in the project.",
    status: async () => ({ state: "ready" }),
    tools: [
      definePluginTool({
        id: "note_read",
        capability: "read",
        description: "Reads notes/<name>.",
        schema: z.object({ name: noteName }),
        output: noteReadOutput,
        example: { name: "todo.txt" },
        execute: (args, ctx) => ({
          ok: true as const,
          name: args.name,
          text: fs.readFileSync(path.join(ctx.authority.root, "notes", args.name), "utf8"),
          root: ctx.authority.display,
        }),
      }),
      definePluginTool({
        id: "note_append",
        capability: "mutation",
        permission: "write",
        description: "Appends one line to notes/<name>; every execution adds exactly one line.",
        schema: z.object({ name: noteName, line: z.string().min(1).max(2000), tags: z.array(z.string()).optional() }),
        output: noteAppendOutput,
        example: { name: "todo.txt", line: "buy milk" },
        execute: async (args, ctx) => {
          const dir = path.join(ctx.authority.root, "notes");
          fs.mkdirSync(dir, { recursive: true });
          fs.appendFileSync(path.join(dir, args.name), `${args.line}\n`);
          // Long enough that concurrent identical GETs overlap the execution.
          await new Promise((resolve) => setTimeout(resolve, 50));
          return {
            ok: true as const,
            name: args.name,
            lines: fs.readFileSync(path.join(dir, args.name), "utf8").split("\n").length - 1,
          };
        },
      }),
      definePluginTool({
        id: "folder_list",
        capability: "read",
        description: "Lists a folder inside the project, with the call's authority narrowed to that folder.",
        schema: z.object({ folder: z.string().min(1) }),
        output: listOutput,
        authority: (args) => ({ root: args.folder, permissions: { write: false } }),
        execute: (_args, ctx) => ({
          ok: true as const,
          root: ctx.authority.display,
          entries: fs.readdirSync(ctx.authority.root).sort(),
        }),
      }),
      definePluginTool({
        id: "shell_probe",
        capability: "read",
        description: "Asks for the terminal permission it needs; refused for a session without it.",
        schema: z.object({}),
        output: z.strictObject({ ok: z.literal(true), terminal: z.boolean() }),
        authority: () => ({ permissions: { terminal: true } }),
        execute: (_args, ctx) => ({ ok: true as const, terminal: ctx.authority.permissions.terminal }),
      }),
    ],
  };
}
