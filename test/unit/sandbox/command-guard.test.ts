import { describe, expect, it } from "vitest";
import { guardCommand, inspectCommand, isCriticalPath } from "../../../server/sandbox/command-guard.js";
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

describe("isCriticalPath", () => {
  it.each(["/", "//", "/*", "/.", "/usr", "/usr/", "/var/*", "~", "~/", "$HOME", "${HOME}/"])("%s is critical", (p) => {
    expect(isCriticalPath(p)).toBe(true);
  });
  it.each(["", ".", "./", "/tmp/x", "/usr/local/share/app", "~/x", "build", "/projects"])("%s is not", (p) => {
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
    expect(failure).toMatchObject({ ok: false, errorCode: "command_refused", retryable: false, errorDetail: { rule: "recursive_delete_of_system_path" } });
    expect(String(failure.repairHint)).toContain("/project");
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
      { words: ["FOO=1", "echo", "a b", "c;d", "e f"], redirects: [{ op: ">&", target: "1" }, { op: ">", target: "out.txt" }] },
      { words: ["ls"], redirects: [] },
      { words: ["wc", "-l"], redirects: [] },
    ]);
  });
});
