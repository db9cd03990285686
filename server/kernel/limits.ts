// Every ceiling of the read-only tools in one place, so docs/PROTOCOL.md and the code cannot drift apart.

/** Paths one /r call may name. */
export const MAX_READ_PATHS = 8;
/**
 * Text returned by one /r call (UTF-8 bytes of content), single file or shared by a multi-read, unless max= asks
 * otherwise. 64 KiB, so a 60 KiB source file comes back whole in one GET (issue 34): of 1,696 source files measured
 * (eslint/lib, dependency-cruiser/src, zod/src, the MCP SDK's dist/esm, this repository), 99.2% fit, 96.8% in 24 KiB.
 * A reader that shows less still gets all of it, through the answer's /z range parts (docs/TRANSPORT_GYM.md).
 */
export const MAX_READ_BYTES = 64 * 1024;
/**
 * The range of /r max=: a reader that takes larger answers asks for up to 128 KiB of content per call (a 60 KiB
 * file in one GET), one that shows less asks for smaller pages. The answer's range snapshot holds it whole.
 */
export const MIN_READ_MAX_BYTES = 512;
export const MAX_READ_MAX_BYTES = 128 * 1024;
/** What each extra file of a multi-read costs in JSON around its content, taken off the shared budget. */
export const READ_ENTRY_OVERHEAD_BYTES = 320;
/**
 * Files larger than this are not loaded whole by /r or /o (a UTF-16/32 or binary file, an /o outline); /g can
 * still search them, and /r pages a UTF-8 file of up to MAX_RANGED_READ_FILE_BYTES by range.
 */
export const MAX_TEXT_FILE_BYTES = 16 * 1024 * 1024;
/**
 * UTF-8 files larger than this are paged by /r from a line index built once per version of the file (through
 * the thread pool, in chunks) instead of being read, hashed and indexed whole on every call.
 */
export const RANGED_READ_MIN_BYTES = 1024 * 1024;
/** Largest UTF-8 file /r pages by range (a 1 GiB log). */
export const MAX_RANGED_READ_FILE_BYTES = 1024 * 1024 * 1024;
/** Lines a ranged file may hold (8 bytes of index each): more answers file_too_large. */
export const MAX_INDEXED_LINES = 16 * 1024 * 1024;
/** Bytes of line indexes kept across calls (least recently used evicted first); what the bridge's RSS adds for them. */
export const MAX_LINE_INDEX_CACHE_BYTES = 128 * 1024 * 1024;
/** One thread-pool read of a large file's scan; other calls are answered between chunks. */
export const LARGE_FILE_SCAN_CHUNK_BYTES = 1024 * 1024;
/**
 * Largest image /r image=1 returns as base64 data (MCP read as image content): base64 grows it by a third, and
 * common model APIs cap images near 5 MB. Not part of max=, which counts text.
 */
export const MAX_IMAGE_BYTES = 3 * 1024 * 1024;
/** Largest offset=, limit= and col= /r accepts: every line of the largest file it pages (MAX_INDEXED_LINES). */
export const MAX_READ_LINE_LIMIT = MAX_INDEXED_LINES;
/** Entries one directory listing returns before it pages. */
export const MAX_DIRECTORY_ENTRIES = 500;

/** /f results per call (default and ceiling). */
export const DEFAULT_FIND_RESULTS = 200;
export const MAX_FIND_RESULTS = 1000;
/** Directory entries /f examines before it stops and says so. */
export const MAX_FIND_VISITED_ENTRIES = 100_000;
/** Bytes of file content /f reads for query= before it stops and says so. */
export const MAX_FIND_CONTENT_BYTES = 256 * 1024 * 1024;

/** Matching lines /g returns (default and ceiling). */
export const DEFAULT_GREP_MATCHES = 100;
export const MAX_GREP_MATCHES = 500;
/** Text of matching lines /g returns in one call. */
export const MAX_GREP_OUTPUT_BYTES = 24 * 1024;
/** A matching line longer than this is shown as a window around its first match. */
export const MAX_GREP_LINE_CHARS = 240;
/** Characters shown before the first match when a long line is windowed. */
export const GREP_WINDOW_LEAD_CHARS = 80;
/** Files larger than this are skipped by /f query=; /g streams them (both engines). */
export const MAX_SEARCH_FILE_BYTES = 8 * 1024 * 1024;
/** Wall-clock ceiling of one search; a slower search returns what it found, marked truncated. */
export const MAX_SEARCH_MS = 10_000;
/**
 * Content searches (/g) running at once across every session of a bridge: each ripgrep is multi-threaded and
 * ~10 MiB, so more at once only adds memory (60 at once: 576 MiB of rg) and thrashing, not speed.
 */
export const MAX_CONCURRENT_SEARCHES = 4;
/** Searches that may wait for one of those; one more is refused with search_busy. */
export const MAX_QUEUED_SEARCHES = 64;
/** Longest pattern /g and /f accept. */
export const MAX_PATTERN_CHARS = 1024;

/** Declarations /o returns before it truncates. */
export const MAX_OUTLINE_ENTRIES = 600;
/** Largest file /o parses. */
export const MAX_OUTLINE_FILE_BYTES = 2 * 1024 * 1024;
/** Longest one outline may parse (in the outline worker) before it is stopped: outline_failed. */
export const MAX_OUTLINE_MS = 10_000;

/** package.json scripts /p lists, and the length each command is clipped to. */
export const MAX_PROJECT_SCRIPTS = 100;
export const MAX_SCRIPT_COMMAND_CHARS = 300;

/** Longest one git command of the version-control tool (/v) may run before it is stopped. */
export const GIT_TIMEOUT_MS = 10_000;
/** Most bytes /v reads from one git command (a whole diff is read to fingerprint it); larger answers are refused. */
export const MAX_GIT_OUTPUT_BYTES = 8 * 1024 * 1024;
/** Rows (files, commits, refs) per /v page: default and ceiling. */
export const DEFAULT_GIT_PAGE = 50;
export const MAX_GIT_PAGE = 200;
/** Characters of one /v text page (a file's patch, a file at a revision), small enough for an MCP answer. */
export const GIT_TEXT_PAGE_CHARS = 8 * 1024;
