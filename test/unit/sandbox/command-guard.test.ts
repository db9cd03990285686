import { describe, expect, it } from "vitest";
import { cwdDepthOf, guardCommand, inspectCommand, isCriticalPath } from "../../../server/sandbox/command-guard.js";
import { worstCase } from "../../../server/sandbox/guard-paths.js";
import { readShell } from "../../../server/sandbox/shell-words.js";
import { isToolError } from "../../../server/errors.js";

describe("inspectCommand refuses", () => {
  it.each([
    ["rm -rf /", "recursive_delete_of_system_path"],
    ["rm -fr /*", "recursive_delete_of_system_path"],
    ["rm -r -f /", "recursive_delete_of_system_path"],
    ["rm -Rf //", "recursive_delete_of_system_path"],
    ["rm --recursive --force /", "recursive_delete_of_system_path"],
    ["rm -rf -- /", "recursive_delete_of_system_path"],
    ["rm -rf / tmp", "recursive_delete_of_system_path"],
    ["rm -rf /usr", "recursive_delete_of_system_path"],
    ["rm -rf /etc/", "recursive_delete_of_system_path"],
    ["rm -rf ~", "recursive_delete_of_system_path"],
    ["rm -rf ~/", "recursive_delete_of_system_path"],
    ['rm -rf "$HOME"', "recursive_delete_of_system_path"],
    ["rm -rf ${HOME}/*", "recursive_delete_of_system_path"],
    ["rm -rf --no-preserve-root /", "no_preserve_root"],
    ["sudo rm -rf /", "recursive_delete_of_system_path"],
    ["sudo -u root rm -rf /", "recursive_delete_of_system_path"],
    ["/bin/rm -rf /", "recursive_delete_of_system_path"],
    ["FOO=1 nohup rm -rf /", "recursive_delete_of_system_path"],
    ["cd /tmp && rm -rf /", "recursive_delete_of_system_path"],
    ["true; rm -rf '/'", "recursive_delete_of_system_path"],
    ["echo hi | xargs echo && r''m -rf /", "recursive_delete_of_system_path"],
    ["bash -c 'rm -rf /'", "recursive_delete_of_system_path"],
    ['sh -c "sudo rm -rf /*"', "recursive_delete_of_system_path"],
    ["eval 'rm -rf /'", "recursive_delete_of_system_path"],
    ["echo $(rm -rf /)", "recursive_delete_of_system_path"],
    ['echo "`rm -rf /`"', "recursive_delete_of_system_path"],
    ["if true; then rm -rf /; fi", "recursive_delete_of_system_path"],
    ["mkfs.ext4 /dev/sda1", "make_filesystem"],
    ["mkfs -t ext4 /dev/sdb", "make_filesystem"],
    ["sudo mkswap /dev/sda2", "make_filesystem"],
    ["wipefs -a /dev/nvme0n1", "make_filesystem"],
    ["shutdown -h now", "power_state"],
    ["sudo reboot", "power_state"],
    ["halt", "power_state"],
    ["poweroff", "power_state"],
    ["init 0", "power_state"],
    ["telinit 6", "power_state"],
    ["systemctl reboot", "power_state"],
    ["kill -9 -1", "kill_everything"],
    ["kill -- -1", "kill_everything"],
    ["kill -KILL 1", "kill_everything"],
    [":(){ :|:& };:", "fork_bomb"],
    [":(){ :|: & };:", "fork_bomb"],
    [": ( ) { : | : & } ; :", "fork_bomb"],
    ["bomb() { bomb | bomb & }; bomb", "fork_bomb"],
    ["function f { f|f& }; f", "fork_bomb"],
    ["echo x > /dev/sda", "block_device_write"],
    ["cat image.iso >/dev/sdb", "block_device_write"],
    ["echo c > /proc/sysrq-trigger", "block_device_write"],
    ["dd if=/dev/zero of=/dev/nvme0n1 bs=1M", "block_device_write"],
    ["dd if=disk.img of=/dev/mmcblk0p1", "block_device_write"],
    ["cp disk.img /dev/vda", "block_device_write"],
    ["echo x | tee /dev/xvda", "block_device_write"],
    ["shred /dev/sda", "block_device_write"],
    ["echo x 2>/dev/mapper/root", "block_device_write"],
    ["chmod -R 777 /", "recursive_permission_change_of_system_path"],
    ["sudo chown -R nobody /usr", "recursive_permission_change_of_system_path"],
    ["mv /* /tmp/trash", "move_system_path"],
    ["find / -delete", "find_delete_of_system_path"],
    ["find -L / -name x -exec rm -f {} +", "find_delete_of_system_path"],
  ])("%s (%s)", (command, rule) => {
    const verdict = inspectCommand(command);
    expect(verdict).toMatchObject({ ok: false, rule });
  });
});

describe("inspectCommand allows", () => {
  it.each([
    "rm -rf ./build",
    "rm -rf build dist node_modules",
    "rm -rf /tmp/urlbridge-test",
    "rm -f /",
    "rm -rf ~/project/build",
    "rm -rf *",
    "echo 'rm -rf /'",
    'echo "rm -rf /" > notes.txt',
    "grep -r 'mkfs' .",
    "echo shutdown",
    "ls /dev/sda",
    "dd if=/dev/urandom of=random.bin bs=1k count=4",
    "echo x > /dev/null 2>&1",
    "node server.js > /dev/stderr",
    "chmod -R 755 ./scripts",
    "chmod 755 /",
    "kill -1 1234",
    "kill -9 4242",
    "kill %1",
    "find . -name '*.tmp' -delete",
    "find /tmp/x -delete",
    "mv build/ dist/",
    "git commit -m 'reboot the parser'",
    "npm run build && npm test",
    "python3 -c 'print(1)'",
    "bash -c 'echo hi'",
    "f() { echo hi; }; f",
    "a | b & c",
    "systemctl status nginx",
    "init-project.sh 0",
    "cat /dev/sda > backup.img",
  ])("%s", (command) => {
    expect(inspectCommand(command)).toEqual({ ok: true });
  });
});

// Accident-shaped commands seen getting through (issue 10 item 9): an expansion that may be empty in front of a
// slash, globs right under / or ~, a cd to / or ~ or out of the project before a recursive delete of a glob,
// climbing past the project root, and all of these under wrappers, nested shells, $'...' quoting and eval.
describe("inspectCommand refuses accident-shaped commands", () => {
  it.each([
    ['rm -rf "$UNSET/"*', "possibly_empty_expansion"],
    ["rm -rf $UNSET/*", "possibly_empty_expansion"],
    ['rm -rf "${STEAMROOT}/"*', "possibly_empty_expansion"],
    ['rm -rf "$DIR/"', "possibly_empty_expansion"],
    ['rm -rf "$out/$name"', "possibly_empty_expansion"],
    ['rm -rf "$(dirname "$0")/"*', "possibly_empty_expansion"],
    ["rm -rf ${TARGET:-}/*", "possibly_empty_expansion"],
    ["rm -rf ${X:+/x}/*", "possibly_empty_expansion"],
    ['rm -rf -- "$PREFIX"/*', "possibly_empty_expansion"],
    ["rm -rf `pwd -P`/*", "possibly_empty_expansion"],
    ['find "$UNSET/" -delete', "possibly_empty_expansion"],
    ['chmod -R 777 "$X/"', "possibly_empty_expansion"],
    ['mv "$SRC/"* /tmp/x', "possibly_empty_expansion"],
    ["rm -rf /*/", "recursive_delete_of_system_path"],
    ["rm -rf /*/*", "recursive_delete_of_system_path"],
    ["rm -rf /u*", "recursive_delete_of_system_path"],
    ["rm -rf /[ub]*", "recursive_delete_of_system_path"],
    ["rm -rf ~/*/", "recursive_delete_of_system_path"],
    ["rm -rf ~/.*", "recursive_delete_of_system_path"],
    ['rm -rf "$HOME"/.*', "recursive_delete_of_system_path"],
    ["rm -rf ${HOME:?}/*", "recursive_delete_of_system_path"],
    ["cd / && rm -rf *", "recursive_delete_of_system_path"],
    ["cd /; rm -rf .*", "recursive_delete_of_system_path"],
    ["cd ~ && rm -rf *", "recursive_delete_of_system_path"],
    ["cd && rm -rf ./*", "recursive_delete_of_system_path"],
    ["cd $HOME; rm -rf *", "recursive_delete_of_system_path"],
    ['cd "$BUILD_DIR" && rm -rf *', "recursive_delete_of_system_path"],
    ["cd /usr && rm -rf *", "recursive_delete_of_system_path"],
    ["cd /tmp && cd .. && rm -rf *", "recursive_delete_of_system_path"],
    ["pushd / && rm -rf *", "recursive_delete_of_system_path"],
    ["cd -P -- / && rm -rf *", "recursive_delete_of_system_path"],
    ["(cd / && rm -rf *)", "recursive_delete_of_system_path"],
    ["cd / && find . -delete", "find_delete_of_system_path"],
    ["cd ../.. && rm -rf *", "recursive_delete_outside_project"],
    ["cd .. && rm -rf *", "recursive_delete_outside_project"],
    ["cd src/../.. && rm -rf *", "recursive_delete_outside_project"],
    ["rm -rf ../../..", "recursive_delete_outside_project"],
    ["rm -rf ../../../", "recursive_delete_outside_project"],
    ["rm -rf ..", "recursive_delete_outside_project"],
    ["rm -rf ../*", "recursive_delete_outside_project"],
    ["rm -rf ../other-project", "recursive_delete_outside_project"],
    ["find .. -name '*.o' -delete", "recursive_delete_outside_project"],
    ["setsid rm -rf /*/", "recursive_delete_of_system_path"],
    ['setsid -f rm -rf "$UNSET/"*', "possibly_empty_expansion"],
    ["echo / | xargs rm -rf", "recursive_delete_of_system_path"],
    ["printf '/usr\\n' | xargs -n1 rm -rf", "recursive_delete_of_system_path"],
    ["xargs -0 -n1 rm -rf /*/", "recursive_delete_of_system_path"],
    ["env -S 'rm -rf /*/'", "recursive_delete_of_system_path"],
    ['env -S"rm -rf /"', "recursive_delete_of_system_path"],
    ["env FOO=1 rm -rf /*", "recursive_delete_of_system_path"],
    ["env -i PATH=/bin rm -rf /usr", "recursive_delete_of_system_path"],
    ["env -C / rm -rf *", "recursive_delete_of_system_path"],
    ["flock /tmp/lock rm -rf /*", "recursive_delete_of_system_path"],
    [`flock -w 5 /tmp/lock -c 'rm -rf "$X/"*'`, "possibly_empty_expansion"],
    ["nohup rm -rf /* &", "recursive_delete_of_system_path"],
    ["timeout 10 rm -rf ~/*", "recursive_delete_of_system_path"],
    ["timeout -k 5 30s rm -rf /*/", "recursive_delete_of_system_path"],
    ["nice -n 19 rm -rf ../..", "recursive_delete_outside_project"],
    ['sudo -E rm -rf "$UNSET/"*', "possibly_empty_expansion"],
    ["command rm -rf /*/", "recursive_delete_of_system_path"],
    ["exec rm -rf /*/", "recursive_delete_of_system_path"],
    ["bash -c 'cd / && rm -rf *'", "recursive_delete_of_system_path"],
    ['sh -c "rm -rf \\"\\$UNSET/\\"*"', "possibly_empty_expansion"],
    ["$'rm' -rf /*/", "recursive_delete_of_system_path"],
    ["$'\\x72\\x6d' -rf /", "recursive_delete_of_system_path"],
    ["rm $'-rf' $'/\\x2a/'", "recursive_delete_of_system_path"],
    ['eval "cd /; rm -rf *"', "recursive_delete_of_system_path"],
    ["eval cd /; rm -rf *", "recursive_delete_of_system_path"],
    ["echo 'rm -rf /*' | sh", "recursive_delete_of_system_path"],
    ["su -c 'rm -rf /*'", "recursive_delete_of_system_path"],
    ["D=/; rm -rf $D*", "recursive_delete_of_system_path"],
    ['D=; rm -rf "$D/"*', "possibly_empty_expansion"],
    ['D=build; unset D; rm -rf "$D/"*', "possibly_empty_expansion"],
    ['for d in /usr /etc; do rm -rf "$d"; done', "recursive_delete_of_system_path"],
    ['for f in "$@"; do rm -rf "$f/"; done', "possibly_empty_expansion"],
    ['export T=/; rm -rf "$T"*', "recursive_delete_of_system_path"],
    ["runuser -u nobody -- rm -rf /*/", "recursive_delete_of_system_path"],
  ])("%s (%s)", (command, rule) => {
    expect(inspectCommand(command)).toMatchObject({ ok: false, rule });
  });
});

describe("inspectCommand allows ordinary work", () => {
  it.each([
    "rm -rf ./build",
    "rm -rf node_modules",
    'rm -rf "$TMPDIR/x"',
    "find . -name '*.o' -delete",
    "git clean -fdx",
    'rm -rf "${DIR:?}"/*',
    'rm -rf "${BUILD:?BUILD is not set}/"*',
    'rm -rf "$TMPDIR/urlbridge-test"',
    'rm -rf "$PWD/build"',
    'rm -rf "$PWD"/dist',
    'rm -rf "$(mktemp -d)/x"',
    "rm -rf $(git rev-parse --show-toplevel)/build",
    "rm -rf dist/*",
    "rm -rf ./*.log",
    "rm -rf .cache",
    "rm -rf src/../build",
    "rm -rf /tmp/*",
    "rm -rf ~/.cache/*",
    "rm -rf /opt/app/cache/*",
    "rm -rf /tmp*",
    "cd build && rm -rf *",
    "cd src && rm -rf ../dist",
    "cd /tmp && rm -rf *",
    "cd /tmp/work && rm -rf ../work2",
    "cd ~/project && rm -rf *",
    "cd / && ls",
    "cd / && rm -rf /tmp/x",
    "cd ~ && rm -rf .cache/pip",
    "cd .. && ls",
    "ls ../..",
    "setsid node server.js",
    "setsid -f npm run dev",
    "xargs -n1 echo",
    "find . -name '*.tmp' -print0 | xargs -0 rm -f",
    "echo build | xargs rm -rf",
    "env -S 'node --inspect' app.js",
    "env FOO=1 npm test",
    "env -C build make clean",
    "flock /tmp/lock npm install",
    "flock .lock -c 'npm ci'",
    "nohup npm start &",
    "timeout 60 npm test",
    "nice -n 10 make -j2",
    "sudo apt-get install -y jq",
    "command -v rm",
    "exec node server.js",
    "bash -c 'rm -rf ./build'",
    'sh -c "cd build && rm -rf *"',
    "$'echo' $'a\\tb'",
    'eval "rm -rf ./dist"',
    "echo 'rm -rf /' | cat",
    'echo "ls" | sh',
    'chmod -R u+w "$DIR/sub"',
    'mv "$OUT/a" "$OUT/b"',
    'find "$BUILD_DIR/obj" -delete',
    "git clean -fdx && rm -rf build",
    "rm -r ./tmp",
    "a || rm -rf build",
    'for d in build dist; do rm -rf "$d/"; done',
    'D=build; rm -rf "$D/"*',
    'export OUT=./out && rm -rf "$OUT"/*',
    'OUT=dist; cd "$OUT" && rm -rf *',
    'B=${BUILD:-build}; rm -rf "$B/"*',
  ])("%s", (command) => {
    expect(inspectCommand(command)).toEqual({ ok: true });
  });
});

describe("inspectCommand with the terminal's cwd depth", () => {
  it.each([
    ["rm -rf ../../..", 1, false],
    ["rm -rf ../../..", 3, true],
    ["rm -rf ../../x", 1, false],
    ["rm -rf ../build", 1, true],
    ["rm -rf ../*", 1, true],
    ["cd ../.. && rm -rf *", 2, true],
    ["cd ../../.. && rm -rf *", 2, false],
  ])("%s from %i levels below the root: allowed %s", (command, cwdDepth, allowed) => {
    const verdict = inspectCommand(command, { cwdDepth });
    if (allowed) expect(verdict).toEqual({ ok: true });
    else expect(verdict).toMatchObject({ ok: false, rule: "recursive_delete_outside_project" });
  });

  it.each([
    ["/project", 0],
    ["/project/", 0],
    ["/project/src", 1],
    ["/project/a/b/c", 3],
  ])("cwdDepthOf(%s) is %i", (display, depth) => {
    expect(cwdDepthOf(display)).toBe(depth);
  });
});

describe("worstCase", () => {
  it.each([
    ["$UNSET/*", "/*", true],
    ["${A:?}/x", "\u0001/x", false],
    ["${A:-/tmp}/x", "/tmp/x", false],
    ["${A-}/x", "/x", true],
    ["${#A}/x", "0/x", false],
    ["$HOME/x", "~/x", false],
    ["${PWD}/x", "./x", false],
    ["$HOMEDIR/x", "/x", true],
    ["$(pwd)/x", "/x", true],
    ["a$$b", "a\u0001b", false],
    ["cost$", "cost$", false],
  ])("%s reads %j (emptied %s)", (word, text, emptied) => {
    expect(worstCase(word)).toEqual({ text, emptied });
  });
});

describe("isCriticalPath", () => {
  it.each([
    "/",
    "//",
    "/*",
    "/.",
    "/usr",
    "/usr/",
    "/var/*",
    "~",
    "~/",
    "$HOME",
    "${HOME}/",
    "/*/",
    "/u*",
    "~/.*",
    "$UNSET/",
    "/tmp/..",
  ])("%s is critical", (p) => {
    expect(isCriticalPath(p)).toBe(true);
  });
  it.each([
    "",
    ".",
    "./",
    "/tmp/x",
    "/usr/local/share/app",
    "~/x",
    "build",
    "/projects",
    "/tmp*",
    "$TMPDIR/x",
    "${D:?}/*",
  ])("%s is not", (p) => {
    expect(isCriticalPath(p)).toBe(false);
  });
});

describe("guardCommand", () => {
  it("throws command_refused naming the rule and how to proceed", () => {
    let caught: unknown;
    try {
      guardCommand("rm -rf /");
    } catch (error) {
      caught = error;
    }
    expect(isToolError(caught)).toBe(true);
    const failure = (caught as { toFailure(): Record<string, unknown> }).toFailure();
    expect(failure).toMatchObject({
      ok: false,
      errorCode: "command_refused",
      retryable: false,
      errorDetail: { rule: "recursive_delete_of_system_path" },
    });
    expect(String(failure.repairHint)).toContain("/project");
  });

  it.each([
    [
      'rm -rf "$UNSET/"*',
      "possibly_empty_expansion",
      ["recursive rm of $UNSET/* is recursive rm of /* when a variable in it is empty", "${VAR:?}", "/project"],
    ],
    [
      "cd / && rm -rf *",
      "recursive_delete_of_system_path",
      ["recursive rm of * after cd / is recursive rm of /*.", "literal path", "cwd="],
    ],
    [
      "rm -rf ../../..",
      "recursive_delete_outside_project",
      ["../../..", "3 levels above the project root", "/project"],
    ],
  ])("refusing %s says what was refused and how to say it safely", (command, rule, phrases) => {
    let caught: unknown;
    try {
      guardCommand(command);
    } catch (error) {
      caught = error;
    }
    const failure = (caught as { toFailure(): Record<string, unknown> }).toFailure();
    expect(failure).toMatchObject({ errorCode: "command_refused", retryable: false, errorDetail: { rule } });
    for (const phrase of phrases) expect(String(failure.repairHint)).toContain(phrase);
  });

  it("passes the cwd depth through", () => {
    expect(() => guardCommand("rm -rf ../x", { cwdDepth: 1 })).not.toThrow();
    expect(() => guardCommand("rm -rf ../x")).toThrow(/above the project root/);
  });

  it("refuses shell text nested too deep to inspect", () => {
    let text = "echo hi";
    for (let i = 0; i < 8; i++) text = `bash -c ${JSON.stringify(text)}`;
    expect(inspectCommand(text)).toMatchObject({ ok: false, rule: "too_deeply_nested" });
  });
});

describe("readShell", () => {
  it("splits simple commands, strips quotes and keeps redirections apart", () => {
    const reading = readShell(`FOO=1 echo "a b" 'c;d' e\\ f 2>&1 > out.txt; ls | wc -l # tail`);
    expect(reading.commands).toEqual([
      {
        words: ["FOO=1", "echo", "a b", "c;d", "e f"],
        redirects: [
          { op: ">&", target: "1" },
          { op: ">", target: "out.txt" },
        ],
      },
      { words: ["ls"], redirects: [] },
      { words: ["wc", "-l"], redirects: [] },
    ]);
  });
});

describe("readShell (what the guard sees)", () => {
  it.each([
    ["$'\\x72\\x6d' -rf $'/\\x2a/'", ["rm", "-rf", "/*/"]],
    ["$'a\\tb' $'it\\'s' $'\\101\\u00e9'", ["a\tb", "it's", "A\u00e9"]],
    ['$"hello world"', ["hello world"]],
    ["rm -rf $(pwd)/x `id -u`", ["rm", "-rf", "$(pwd)/x", "`id -u`"]],
  ])("%s reads as %j", (text, words) => {
    expect(readShell(text).commands[0]?.words).toEqual(words);
  });

  it("records what ended each command", () => {
    const reading = readShell("a && b || c | d |& e; f & g\nh");
    expect(reading.commands.map((c) => c.words[0])).toEqual(["a", "b", "c", "d", "e", "f", "g", "h"]);
    expect(reading.separators).toEqual(["&&", "||", "|", "|&", ";", "&", "\n", ""]);
  });
});

describe("inspectCommand on arbitrary text", () => {
  it("never throws and always answers a verdict (2,000 seeded random commands)", () => {
    const alphabet = [
      "rm",
      " ",
      "-rf",
      "/",
      "*",
      "$",
      "{",
      "}",
      "(",
      ")",
      "'",
      '"',
      "`",
      "\\",
      ";",
      "|",
      "&",
      "cd",
      "..",
      "~",
      "$'",
      "\\x2",
      "env",
      "-S",
      "xargs",
      "flock",
      "-c",
      "bash",
      "eval",
      "=",
      ":?",
      ":-",
      "\n",
      "#",
      "for",
      "in",
      "do",
      "D",
    ];
    let seed = 0x5eed;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let i = 0; i < 2_000; i++) {
      const length = 1 + (next() % 24);
      const text = Array.from({ length }, () => alphabet[next() % alphabet.length]).join("");
      const verdict = inspectCommand(text, { cwdDepth: next() % 3 });
      expect(typeof verdict.ok).toBe("boolean");
    }
  });
});
