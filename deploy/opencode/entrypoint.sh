#!/bin/sh
# Starts `opencode serve` on loopback only, and only behind its password (Basic auth, user "opencode"): in the
# appliance this container shares the bridge's network namespace, whose loopback agents' commands also reach.
set -eu
password="${OPENCODE_SERVER_PASSWORD:-}"
if [ "${#password}" -lt 16 ]; then
  echo "opencode: OPENCODE_SERVER_PASSWORD must be set to at least 16 characters (compose passes URLBRIDGE_OPENCODE_PASSWORD from .env; make one with \`openssl rand -base64 32\`)" >&2
  exit 64
fi
# Docker creates an empty folder where a bind-mounted file is missing: say so instead of starting without providers.
if [ -n "${OPENCODE_CONFIG:-}" ] && [ ! -f "$OPENCODE_CONFIG" ]; then
  echo "opencode: OPENCODE_CONFIG=$OPENCODE_CONFIG is not a file: copy deploy/opencode/opencode.example.json to deploy/opencode/opencode.json (or set URLBRIDGE_OPENCODE_CONFIG to yours), remove the empty folder Docker may have created in its place, then start again" >&2
  exit 66
fi
exec opencode serve --hostname 127.0.0.1 --port "${OPENCODE_PORT:-4096}" "$@"
