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

export function readShell(text: string): ShellReading {
  const commands: SimpleCommand[] = [];
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
  const endCommand = () => {
    endWord();
    if (words.length > 0 || redirects.length > 0) commands.push({ words, redirects });
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
    if (ch === "$" && text[i + 1] === "(") {
      const end = closingParen(text, i + 2);
      substitutions.push(text.slice(i + 2, end - 1));
      endCommand();
      i = end - 1;
      continue;
    }
    if (ch === "`") {
      const end = text.indexOf("`", i + 1);
      substitutions.push(text.slice(i + 1, end === -1 ? undefined : end));
      endCommand();
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
      endCommand();
      continue;
    }
    if (WHITESPACE.test(ch)) {
      endWord();
      continue;
    }
    word = (word ?? "") + ch;
  }
  endCommand();
  return { commands, substitutions };
}
