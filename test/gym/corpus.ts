// The named nasty-character corpus: text an agent must be able to carry through a URL byte for byte.
// Contract and extension rules: docs/TRANSPORT_GYM.md ("Corpus"). Names are stable; never reuse one.

/** Bump when an entry is added, removed or changes text, so reports say which corpus they ran. */
export const CORPUS_VERSION = "2026.12.2";

export interface CorpusEntry {
  /** Stable, unique, kebab-case, prefixed by its group. */
  name: string;
  text: string;
  /** Why the entry exists, when the name does not say it (a regression, a reader quirk). */
  note?: string;
}

const entry = (name: string, text: string, note?: string): CorpusEntry =>
  note ? { name, text, note } : { name, text };

const URL_GRAMMAR: CorpusEntry[] = [
  entry("url-ampersand", "a&b"),
  entry("url-double-ampersand", "a && b || c"),
  entry("url-equals", "a=b==c"),
  entry("url-question", "what?yes?no"),
  entry("url-hash", "#include <stdio.h> // #1"),
  entry("url-hash-only", "#"),
  entry("url-percent", "%"),
  entry("url-plus", "1+1=2"),
  entry("url-plus-run", "++i; i++ + ++j"),
  entry("url-slash", "/a//b/../c/./d"),
  entry("url-semicolon-comma", "a;b,c;;,,"),
  entry("url-at-colon", "user:pass@host:8080"),
  entry("url-full", "https://example.com/p?a=1&b=%20#frag"),
  entry("url-raw-lookalike", "raw=x"),
  entry("url-raw-lookalike-amp", "a&raw=b&raw=c"),
  entry("url-raw-lookalike-query", "?raw=1&raw=2"),
  entry("url-brackets", "a[0][b]={c}|d^e`f"),
  entry("url-angle", "<a href='x'>y</a>"),
];

const PARAM_LOOKALIKES: CorpusEntry[] = [
  entry(
    "param-wait",
    "&wait=1000",
    "regression: encodeURIComponent's %26wait%3D1000 was refused as a misplaced parameter",
  ),
  entry("param-path", "&path=x"),
  entry("param-run-call", "x&run=2&call=y"),
  entry("param-mixed", "foo&wait=1000&bar&path=/etc/passwd"),
  entry("param-blob-count", "&blob=a&count=3&i=0"),
  entry("param-encoded-amp", "%26wait=1000", "an escaped & (here %26 after ~p) never counts as a misplaced parameter"),
  entry("param-no-name", "a&=b&1x=2"),
];

const WHITESPACE: CorpusEntry[] = [
  entry("ws-space", " "),
  entry(
    "ws-spaces-around",
    "  leading and trailing  ",
    "WHATWG readers strip spaces that end a URL: typed by hand they must be ~s",
  ),
  entry("ws-tab", "a\tb\t\tc"),
  entry("ws-lf", "line1\nline2\n"),
  entry("ws-crlf", "line1\r\nline2\r\n"),
  entry("ws-cr", "line1\rline2\r"),
  entry("ws-blank-lines", "\n\n\n"),
  entry("ws-formfeed-vtab", "a\fb\vc"),
  entry("ws-nbsp", "a\u00a0b"),
  entry(
    "ws-trailing-nbsp",
    "ends in a no-break space\u00a0",
    "String.trim eats U+00A0: caught the gym's raw-socket reader trimming a raw Location header",
  ),
  entry("ws-ideographic", "a\u3000b"),
  entry("ws-zero-width", "a\u200bb\u200cc\u200dd\u2060e"),
  entry("ws-line-separators", "a\u2028b\u2029c\u0085d"),
];

const CONTROLS: CorpusEntry[] = [
  entry("ctl-nul", "a\u0000b"),
  entry("ctl-c0", Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join("")),
  entry("ctl-del", "a\u007fb"),
  entry("ctl-c1", "a\u0080\u0085\u009fb"),
  entry("ctl-escape-seq", "\u001b[31mred\u001b[0m"),
  entry("ctl-bell-backspace", "ding\u0007\b\bx"),
];

const QUOTES: CorpusEntry[] = [
  entry(
    "quote-double",
    'say "hello"',
    "regression: behind a double-encoding proxy (%2522) the quote arrived as the text %22",
  ),
  entry("quote-single", "it's 'quoted'"),
  entry("quote-backtick", "`cmd` ``x``"),
  entry("quote-smart", "\u201chello\u201d \u2018x\u2019 \u00abguillemets\u00bb"),
  entry("quote-escaped", "a\\\"b\\'c\\\\d"),
];

const WINDOWS: CorpusEntry[] = [
  entry("win-path", "C:\\Users\\me\\Documents\\file.txt"),
  entry("win-unc", "\\\\server\\share\\dir\\"),
  entry("win-spaces", "C:\\Program Files (x86)\\App\\app.exe"),
  entry("win-env", "%USERPROFILE%\\AppData\\%APPDATA%"),
  entry("win-trailing-backslash", "dir\\"),
];

const REGEX: CorpusEntry[] = [
  entry("re-anchors", "^\\s*(foo|bar)+?\\d{2,}$"),
  entry("re-class", "[^\\]\\[]*[a-z0-9_-]"),
  entry("re-named", "(?<year>\\d{4})-(?<m>\\d\\d)\\k<year>"),
  entry("re-escapes", "\\.\\*\\+\\?\\(\\)\\{\\}\\|\\^\\$"),
  entry("re-lookaround", "(?=a)(?!b)(?<=c)(?<!d)"),
];

const POWERSHELL: CorpusEntry[] = [
  entry("ps-pipeline", 'Get-ChildItem -Path "C:\\x" | Where-Object { $_.Length -gt 1kb } | Select -First 5'),
  entry("ps-env", "$env:PATH; $env:USERPROFILE"),
  entry("ps-backtick", 'Write-Host "a`tb`nc" `\n  -NoNewline'),
  entry("ps-hashtable", "@{ a = 1; 'b c' = @(1,2) }"),
  entry("ps-here-string", "@'\nliteral $x\n'@"),
];

const SHELL: CorpusEntry[] = [
  entry("sh-and-pipe", "echo \"$HOME\" && ls -la | grep -E '^d' > /dev/null 2>&1"),
  entry("sh-subst", "$(whoami) `id` ${USER:-x} $((1+2))"),
  entry("sh-history", "!! !$ !-1"),
  entry("sh-heredoc", "cat <<'EOF'\n$x `y`\nEOF\n"),
  entry("sh-redirects", "a;b|c&d<e>f>>g 2>&1 &>h"),
  entry("sh-glob", "*.ts **/x?.js [abc]*.{md,txt}"),
  entry("sh-quotes-mixed", "echo 'it'\"'\"'s' \"a\\\"b\""),
];

const CODE: CorpusEntry[] = [
  entry("ts-generics", "const m: Map<string, Array<number>> = new Map();\n"),
  entry("ts-template", "const s = `a ${b + 1} \\${c}`;"),
  entry("ts-optional", "a?.b ?? c ?. d || (e && f)"),
  entry("ts-regex-literal", "const re = /^(?:\\+|-)?\\d+%$/gi;"),
  entry("jsx-element", '<div className="a" onClick={() => f(1)}>{x && <B y={{ z: 1 }} />}</div>'),
  entry("jsx-entity", "<p>&amp; &lt; &#38; &#x26;</p>"),
  entry("json-object", '{"a":[1,2,{"b":"c\\"d"}],"e":null,"f":"\\u00e9\\n"}'),
  entry("json-pretty", '{\n  "k": "v",\n  "n": 1.5e-3\n}\n'),
  entry("py-fstring", 'print(f"{x!r:>10} {y:%Y-%m-%d}")'),
  entry("c-printf", 'printf("%02d %5.2f %s %% %x\\n", a, b, c, d);', "printf formats: a literal % before hex digits"),
  entry("sql-like", "SELECT * FROM t WHERE a LIKE '%x_%' ESCAPE '\\';"),
  entry("css-selector", "a[href^='http']::after { content: \"\\201C\"; }"),
];

const DIFFS: CorpusEntry[] = [
  entry(
    "diff-unified",
    "--- a/src/x.ts\n+++ b/src/x.ts\n@@ -1,3 +1,4 @@\n import a from 'a';\n-const b = 1;\n+const b = 2;\n+const c = b + 1;\n export {};\n",
  ),
  entry("diff-no-newline", "@@ -1 +1 @@\n-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file"),
  entry("diff-patch-envelope", "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n"),
];

const UNICODE: CorpusEntry[] = [
  entry("uni-latin1", "caf\u00e9 na\u00efve \u00fc\u00df"),
  entry("uni-combining", "cafe\u0301 n\u0303 a\u030a\u0327"),
  entry("uni-zalgo", "Z\u0351\u036b\u0343a\u0352\u036cl\u0344g\u0350o\u0489"),
  entry("uni-subscript", "CO\u2082 H\u2082O \u2194"),
  entry("uni-cjk", "\u4e2d\u6587 \u65e5\u672c\u8a9e \ud55c\uad6d\uc5b4"),
  entry("uni-rtl", "\u05e2\u05d1\u05e8\u05d9\u05ea \u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u202eoverride\u202c"),
  entry("uni-emoji", "\ud83d\ude00 \ud83d\udc4d\ud83c\udffd"),
  entry("uni-zwj-family", "\ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67\u200d\ud83d\udc66"),
  entry("uni-flag", "\ud83c\uddfa\ud83c\uddf3 \ud83c\udff3\ufe0f\u200d\ud83c\udf08"),
  entry("uni-astral-math", "\ud835\udd18\ud835\udd2b\ud835\udd26 \ud834\udd1e"),
  entry("uni-max", "\u{10ffff}\u{e0001}\u{f0000}"),
  entry("uni-noncharacters", "\uffff\ufffe\ufdd0"),
  entry("uni-replacement", "\ufffd"),
  entry(
    "uni-lone-high-surrogate",
    "a\ud83db",
    "no UTF-8 form: expected on disk as U+FFFD; regression: the encoder threw on it",
  ),
  entry("uni-lone-low-surrogate", "a\ude00b", "no UTF-8 form: expected on disk as U+FFFD"),
  entry("uni-reversed-pair", "\ude00\ud83d"),
  entry("uni-bom-start", "\ufeffstarts with a BOM\n"),
  entry("uni-bom-middle", "a\ufeffb", "regression: an encoded BOM (%EF%BB%BF) vanished, TextDecoder dropped it"),
  entry("uni-fullwidth-ascii", "\uff05\uff12\uff10 \uff06\uff1d \uff0b"),
  entry("uni-latin1-lookalikes", "\u00c3\u00a9 \u00e2\u0082\u00ac", "mojibake: the latin1 reading of UTF-8 bytes"),
];

const TILDE: CorpusEntry[] = [
  entry("tilde-n", "~n"),
  entry("tilde-double", "~~"),
  entry("tilde-triple", "~~~"),
  entry("tilde-alone", "~"),
  entry("tilde-trailing", "a~"),
  entry("tilde-u-escape", "~u2082"),
  entry("tilde-u-braced", "~u{1F600}"),
  entry("tilde-u-pair", "~uD83D~uDE00"),
  entry("tilde-u-lone", "~uD83D"),
  entry("tilde-u-out-of-range", "~u{110000}"),
  entry("tilde-unknown", "~e9 ~N ~x ~0"),
  entry("tilde-all-escapes", "~n~r~t~h~p~q~s~a~~"),
  entry("tilde-home", "~/.bashrc ~user/x"),
  entry("tilde-percent", "~p20 ~%41"),
];

const PERCENT: CorpusEntry[] = [
  entry("pct-space", "%20"),
  entry("pct-invalid", "%zz %g1 %"),
  entry("pct-trailing", "100%"),
  entry("pct-double", "%%"),
  entry("pct-double-encoded", "%2520", "literal text that looks double-encoded"),
  entry("pct-utf8", "%C3%A9 %E2%82%82"),
  entry("pct-lone-lead", "%C3"),
  entry("pct-never-utf8", "%FF%FE"),
  entry("pct-unicode-style", "%u00e9"),
  entry("pct-sentence", "50% off, 100 % sure"),
  entry("pct-encoded-specials", "%25 %7E %2B %26 %3D %23"),
  entry("pct-printf-hex", "%02x%2d%41"),
];

const PLUS: CorpusEntry[] = [
  entry("plus-alone", "+"),
  entry("plus-spaced", " + "),
  entry("plus-cpp", "C++ and C#"),
  entry("plus-tilde-q", "~q+~q"),
];

// Issue 14: everyday code a standard encoder (encodeURIComponent, urllib.parse.quote, URLSearchParams)
// carries once; the server used to strip up to four percent layers and write printf("%02x") as U+0002 + "x".
const DECODING: CorpusEntry[] = [
  entry("dec-printf-hex", 'printf("%02x %20s")', "regression: encodeURIComponent's layer was followed by three more"),
  entry("dec-time-format", 't = "%02d:%2d"', 'regression: landed on disk as t = "\\x02d:-"'),
  entry("dec-format-bare", "%02d:%2d", "no space or quote: the escaped - of %2d is the evidence"),
  entry("dec-python-percent", '"%s=%d" % (k, v)'),
  entry("dec-go-sprintf", 'fmt.Sprintf("%-10s|%5.2f|%x\n", s, f, n)'),
  entry("dec-literal-escapes", "see %41 and %2F in the docs"),
  entry("dec-embedded-url", 'curl -s "https://example.com/search?q=a%20b&x=%2F&y=100%25"'),
  entry(
    "dec-embedded-url-bare",
    "https://example.com/a%20b?x=%2F",
    "no evidence: only ~p (or the reference encoder) carries it",
  ),
  entry(
    "dec-regex-plus",
    "\\w+\\(\\s+(\\d+)\\)+",
    "regression: typed with spaces as %20, its + were searched as spaces",
  ),
  entry(
    "dec-patch-added-lines",
    "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n+y = x + 1\n*** End Patch\n",
  ),
  entry("dec-percent-and-plus", "a+b %2B c", "a literal %2B next to a real +"),
];

// Issue 27: literal ~ in text an agent's own encoder wrote (encodeURIComponent, quote, QueryEscape leave ~ as
// is); an encoded newline, #, % or & is the evidence that its ~ are text. The encoder forms carry these.
const TILDE_LITERAL: CorpusEntry[] = [
  entry(
    "tlit-numpy",
    "mask = ~np.isnan(x)\nflag = ~~value\n",
    'regression: landed on disk as "mask = \\np.isnan" and "~value"',
  ),
  entry("tlit-strike", "~~strike~~ and ~~x~~\n", "regression: Markdown ~~strike~~ became ~strike~"),
  entry("tlit-erlang", 'io:format("~s~n", [X]),\nio:format("~p~n", [Y]).\n'),
  entry("tlit-lisp", '(format t "~a: ~a~%" k v) ; 100%'),
  entry("tlit-home-and-escapes", "cd ~/src && ls ~n~t # ~h"),
  entry("tlit-crlf", "x = ~a\r\ny = ~q\r\n"),
  entry("tlit-all-escapes", "~n~r~t~h~p~q~s~a~~~u00e9~u{1F600}\t"),
  entry(
    "tlit-single-line",
    "mask = ~np.isnan(x)",
    "no encoded newline: the evidence is the escaped = beside a raw ~ (a notice)",
  ),
];

const MIXED: CorpusEntry[] = [
  entry("mix-everything", "a b+c&d=e#f%g~h\n\"i'j\\k<l>m{n}o|p^q`r[s]t\u00e9\ud83d\ude00~n%20&wait=1"),
  entry("mix-yaml", "key: \"v\" # comment\nlist:\n  - a: 1\n  - 'b'\n"),
  entry("mix-markdown", "# Title\n\n- [x] **bold** _it_ `code`\n\n```sh\nrm -rf ./build\n```\n"),
  entry("mix-empty", ""),
];

export const CORPUS: readonly CorpusEntry[] = [
  ...URL_GRAMMAR,
  ...PARAM_LOOKALIKES,
  ...WHITESPACE,
  ...CONTROLS,
  ...QUOTES,
  ...WINDOWS,
  ...REGEX,
  ...POWERSHELL,
  ...SHELL,
  ...CODE,
  ...DIFFS,
  ...UNICODE,
  ...TILDE,
  ...PERCENT,
  ...PLUS,
  ...DECODING,
  ...TILDE_LITERAL,
  ...MIXED,
];

/** The UTF-8 bytes a file written with `text` must hold: lone surrogates become U+FFFD, as in any UTF-8 writer. */
export function expectedBytes(text: string): Buffer {
  return Buffer.from(text, "utf8");
}
