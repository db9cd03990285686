// Named keys an agent can type into a PTY (key=enter,ctrl-c), as the bytes a terminal in its normal mode sends.

const KEYS: Record<string, string> = {
  enter: "\r",
  tab: "\t",
  backspace: "\x7f",
  esc: "\x1b",
  escape: "\x1b",
  space: " ",
  up: "\x1b[A",
  down: "\x1b[B",
  right: "\x1b[C",
  left: "\x1b[D",
  home: "\x1b[H",
  end: "\x1b[F",
  pageup: "\x1b[5~",
  pagedown: "\x1b[6~",
  delete: "\x1b[3~",
  insert: "\x1b[2~",
  f1: "\x1bOP",
  f2: "\x1bOQ",
  f3: "\x1bOR",
  f4: "\x1bOS",
  f5: "\x1b[15~",
  f10: "\x1b[21~",
};

/** The key names accepted, for messages and docs: the list above plus ctrl-a ... ctrl-z. */
export const KEY_NAMES = [...Object.keys(KEYS), "ctrl-a..ctrl-z", "ctrl-[", "ctrl-\\", "ctrl-]"];

/** The bytes of one named key, or undefined when the name is unknown. Case-insensitive; "c-c" = "ctrl-c". */
export function keyBytes(name: string): string | undefined {
  const key = name.trim().toLowerCase();
  const known = KEYS[key];
  if (known !== undefined) return known;
  const ctrl = /^(?:ctrl|c)[-+](.)$/.exec(key)?.[1];
  if (ctrl === undefined) return undefined;
  if (ctrl >= "a" && ctrl <= "z") return String.fromCharCode(ctrl.charCodeAt(0) - 96);
  if (ctrl === "[") return "\x1b";
  if (ctrl === "\\") return "\x1c";
  if (ctrl === "]") return "\x1d";
  return undefined;
}
