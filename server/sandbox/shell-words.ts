// A small, forgiving reading of POSIX shell text into simple commands (words + redirections), enough for the
// command guard to look at what would run. It never executes or expands anything and never throws.

export interface Redirect {
  /** ">", ">>", ">|", "&>", "<"... */
  op: string;
  target: string;
}

export interface SimpleCommand {
  words: string[];
  redirects: Redirect[];
}

export interface ShellReading {
  commands: SimpleCommand[];
  /** What ended each command, index for index: ";", "&", "&&", "|", "||", "|&", "\n", "(", ")", or "" at the end. */
  separators: string[];
  /** Bodies of $(...) and `...` found anywhere, including inside double quotes: they run too. */
  substitutions: string[];
}

const SEPARATORS = new Set([";", "&", "|", "\n", "(", ")"]);
const WHITESPACE = /[ \t\r\f\v]/;

/** Index just past the ")" that closes the "(" before `start`, honouring quotes and nesting. */
function closingParen(text: string, start: number): number {
  let depth = 1;
  for (let i = start; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "\\") i++;
    else if (ch === "'") {
      const end = text.indexOf("'", i + 1);
      i = end === -1 ? text.length : end;
    } else if (ch === "(") depth++;
    else if (ch === ")" && --depth === 0) return i + 1;
  }
  return text.length;
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

const NUMERIC_ESCAPES: Record<string, { digits: RegExp; radix: number }> = {
  x: { digits: /^[0-9a-fA-F]{1,2}/, radix: 16 },
  u: { digits: /^[0-9a-fA-F]{1,4}/, radix: 16 },
  U: { digits: /^[0-9a-fA-F]{1,8}/, radix: 16 },
};

/** One escape of $'...' starting at the backslash: the character it stands for and how many characters it took. */
function readAnsiCEscape(text: string, at: number): { value: string; length: number } {
  const next = text[at + 1]!;
  const simple = SIMPLE_ESCAPES[next];
  if (simple !== undefined) return { value: simple, length: 2 };
  if (next === "c" && at + 2 < text.length)
    return { value: String.fromCharCode(text.charCodeAt(at + 2) & 0x1f), length: 3 };
  const octal = /^[0-7]{1,3}/.exec(text.slice(at + 1))?.[0];
  if (octal !== undefined)
    return { value: String.fromCharCode(Number.parseInt(octal, 8) & 0xff), length: 1 + octal.length };
  const numeric = NUMERIC_ESCAPES[next];
  const digits = numeric?.digits.exec(text.slice(at + 2))?.[0];
  if (numeric === undefined || digits === undefined) return { value: `\\${next}`, length: 2 };
  const code = Number.parseInt(digits, numeric.radix);
  return { value: code <= 0x10ffff ? String.fromCodePoint(code) : "\ufffd", length: 2 + digits.length };
}

/** Decodes bash's $'...' quoting from the character after the opening quote: the text and the index of the closing quote. */
function readAnsiC(text: string, start: number): { value: string; end: number } {
  let value = "";
  let i = start;
  while (i < text.length && text[i] !== "'") {
    if (text[i] === "\\" && i + 1 < text.length) {
      const escape = readAnsiCEscape(text, i);
      value += escape.value;
      i += escape.length;
    } else value += text[i++];
  }
  return { value, end: i };
}

export function readShell(text: string): ShellReading {
  const commands: SimpleCommand[] = [];
  const separators: string[] = [];
  const substitutions: string[] = [];
  let words: string[] = [];
  let redirects: Redirect[] = [];
  let word: string | undefined;
  let pendingOp: string | undefined;

  const endWord = () => {
    if (word === undefined) return;
    if (pendingOp !== undefined) {
      redirects.push({ op: pendingOp, target: word });
      pendingOp = undefined;
    } else words.push(word);
    word = undefined;
  };
  const endCommand = (separator: string) => {
    endWord();
    if (words.length > 0 || redirects.length > 0) {
      commands.push({ words, redirects });
      separators.push(separator);
    }
    words = [];
    redirects = [];
    pendingOp = undefined;
  };

  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "\\") {
      if (text[i + 1] === "\n") i++;
      else if (i + 1 < text.length) word = (word ?? "") + text[++i];
      continue;
    }
    if (ch === "'") {
      const end = text.indexOf("'", i + 1);
      word = (word ?? "") + text.slice(i + 1, end === -1 ? undefined : end);
      i = end === -1 ? text.length : end;
      continue;
    }
    if (ch === "$" && text[i + 1] === "'") {
      const { value, end } = readAnsiC(text, i + 2);
      word = (word ?? "") + value;
      i = end;
      continue;
    }
    // $"..." is a translatable string: for our purposes an ordinary double-quoted one.
    if (ch === "$" && text[i + 1] === '"') continue;
    if (ch === '"') {
      let j = i + 1;
      let content = "";
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === "\\" && j + 1 < text.length && '"\\$`\n'.includes(text[j + 1]!)) {
          if (text[j + 1] !== "\n") content += text[j + 1];
          j++;
        } else if (text[j] === "$" && text[j + 1] === "(") {
          const end = closingParen(text, j + 2);
          substitutions.push(text.slice(j + 2, end - 1));
          content += text.slice(j, end);
          j = end - 1;
        } else if (text[j] === "`") {
          const end = text.indexOf("`", j + 1);
          substitutions.push(text.slice(j + 1, end === -1 ? undefined : end));
          content += text.slice(j, end === -1 ? undefined : end + 1);
          j = end === -1 ? text.length : end;
        } else content += text[j];
      }
      word = (word ?? "") + content;
      i = j;
      continue;
    }
    // A substitution stays in its word as text (the guard treats it as a value it cannot know) and runs too.
    if (ch === "$" && text[i + 1] === "(") {
      const end = closingParen(text, i + 2);
      substitutions.push(text.slice(i + 2, end - 1));
      word = (word ?? "") + text.slice(i, end);
      i = end - 1;
      continue;
    }
    if (ch === "`") {
      const end = text.indexOf("`", i + 1);
      substitutions.push(text.slice(i + 1, end === -1 ? undefined : end));
      word = (word ?? "") + text.slice(i, end === -1 ? undefined : end + 1);
      i = end === -1 ? text.length : end;
      continue;
    }
    if (ch === "#" && word === undefined) {
      const end = text.indexOf("\n", i);
      i = end === -1 ? text.length : end - 1;
      continue;
    }
    if (ch === ">" || ch === "<" || (ch === "&" && text[i + 1] === ">")) {
      // "2>" and "&>": a word of digits right before the operator is a file descriptor, not an argument.
      if (word !== undefined && /^\d+$/.test(word)) word = undefined;
      endWord();
      let op = ch;
      while (i + 1 < text.length && ">|&".includes(text[i + 1]!) && op.length < 3) op += text[++i];
      pendingOp = op;
      continue;
    }
    if (SEPARATORS.has(ch)) {
      let separator = ch;
      if ((ch === "&" || ch === "|") && text[i + 1] === ch) separator += text[++i];
      else if (ch === "|" && text[i + 1] === "&") separator += text[++i];
      endCommand(separator);
      continue;
    }
    if (WHITESPACE.test(ch)) {
      endWord();
      continue;
    }
    word = (word ?? "") + ch;
  }
  endCommand("");
  return { commands, separators, substitutions };
}
