# Sourced by .ci/run (and usable alone: `source .ci/test-clients.sh`): test-only installs of the real agent
# clients the suites drive, cached outside the checkout and reused by later runs, never dependencies of the
# package. Each binary ships inside an npm platform package (nothing is downloaded by a postinstall, so
# --ignore-scripts is safe). Exporting a path makes the tests that need it fail, not skip, if it is missing.
#   URLBRIDGE_OPENCODE_BIN  OpenCode 1.18.33   test/integration/plugins/opencode-*, test/e2e/opencode-*, test/real-clients/
#   URLBRIDGE_CLAUDE_BIN    Claude Code 2.1.328 test/real-clients/
#   URLBRIDGE_CODEX_BIN     Codex CLI 0.169.0   test/real-clients/
#   URLBRIDGE_GEMINI_BIN    Gemini CLI 0.61.0   test/real-clients/ (a Node program: its bin script, run by node)

test_clients_cache="${XDG_CACHE_HOME:-$HOME/.cache}/urlbridge-test"
test_clients_arch=$(node -p process.arch)
case "$test_clients_arch" in x64) test_clients_triple=x86_64-unknown-linux-musl ;; arm64) test_clients_triple=aarch64-unknown-linux-musl ;; esac

# install_test_client <dir> <binary path inside dir> <npm spec...>: installs the specs into <dir> unless the
# binary is already there, then checks it is.
install_test_client() {
  local dir="$1" bin="$2"; shift 2
  if [ ! -e "$dir/$bin" ]; then
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo '{"private":true}' > "$dir/package.json"
    npm install --prefix "$dir" --no-save --no-audit --no-fund --ignore-scripts --omit=optional "$@"
  fi
  [ -e "$dir/$bin" ] || { echo "ci: $* did not install $dir/$bin" >&2; return 1; }
}

OPENCODE_VERSION=1.18.33
d="$test_clients_cache/opencode-ai-$OPENCODE_VERSION"
install_test_client "$d" "node_modules/opencode-linux-$test_clients_arch/bin/opencode" \
  "opencode-ai@$OPENCODE_VERSION" "opencode-linux-$test_clients_arch@$OPENCODE_VERSION"
export URLBRIDGE_OPENCODE_BIN="$d/node_modules/opencode-linux-$test_clients_arch/bin/opencode"

# With --ignore-scripts the main package's bin/claude.exe is a stub: the platform package holds the binary.
CLAUDE_CODE_VERSION=2.1.328
d="$test_clients_cache/claude-code-$CLAUDE_CODE_VERSION"
install_test_client "$d" "node_modules/@anthropic-ai/claude-code-linux-$test_clients_arch/claude" \
  "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@anthropic-ai/claude-code-linux-$test_clients_arch@$CLAUDE_CODE_VERSION"
export URLBRIDGE_CLAUDE_BIN="$d/node_modules/@anthropic-ai/claude-code-linux-$test_clients_arch/claude"

# Codex publishes its platform builds as versions of @openai/codex itself (0.169.0-linux-x64), aliased here.
CODEX_VERSION=0.169.0
d="$test_clients_cache/codex-$CODEX_VERSION"
install_test_client "$d" "node_modules/@openai/codex-linux-$test_clients_arch/vendor/$test_clients_triple/bin/codex" \
  "@openai/codex@$CODEX_VERSION" "@openai/codex-linux-$test_clients_arch@npm:@openai/codex@$CODEX_VERSION-linux-$test_clients_arch"
export URLBRIDGE_CODEX_BIN="$d/node_modules/@openai/codex-linux-$test_clients_arch/vendor/$test_clients_triple/bin/codex"

GEMINI_CLI_VERSION=0.61.0
d="$test_clients_cache/gemini-cli-$GEMINI_CLI_VERSION"
install_test_client "$d" "node_modules/@google/gemini-cli/package.json" "@google/gemini-cli@$GEMINI_CLI_VERSION"
gemini_bin=$(node -p "const p=require('$d/node_modules/@google/gemini-cli/package.json'); typeof p.bin==='string'?p.bin:p.bin.gemini")
export URLBRIDGE_GEMINI_BIN="$d/node_modules/@google/gemini-cli/$gemini_bin"
[ -f "$URLBRIDGE_GEMINI_BIN" ] || { echo "ci: Gemini CLI's bin script $URLBRIDGE_GEMINI_BIN is missing" >&2; return 1; }
unset d gemini_bin

"$URLBRIDGE_OPENCODE_BIN" --version >/dev/null
"$URLBRIDGE_CLAUDE_BIN" --version >/dev/null
"$URLBRIDGE_CODEX_BIN" --version >/dev/null
node "$URLBRIDGE_GEMINI_BIN" --version >/dev/null
