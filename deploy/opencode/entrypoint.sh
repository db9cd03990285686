#!/bin/sh
# Starts `opencode serve` on loopback only, and only behind its password (Basic auth, user "opencode"): in the
# appliance this container shares the bridge's network namespace, whose loopback agents' commands also reach.
# It also leaves when the bridge's namespace does (see the watch below), so Docker restarts it into the new one.
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

opencode serve --hostname 127.0.0.1 --port "${OPENCODE_PORT:-4096}" "$@" &
server=$!
# Stop (SIGTERM from docker's init): pass it on, wait for OpenCode, leave at once.
trap 'kill -TERM "$server" 2>/dev/null || true; wait "$server" || true; exit 143' TERM INT

# A container joined to another's network namespace keeps the old one when that container restarts: OpenCode would
# go on answering on a loopback the bridge no longer shares. So watch for the bridge's control port in this
# namespace's socket table (a listening socket, state 0A) and leave after three misses in a row; `restart:
# unless-stopped` then starts this container again inside the bridge's current namespace. OPENCODE_BRIDGE_PORT=""
# turns the watch off (OpenCode on its own).
bridge_port="${OPENCODE_BRIDGE_PORT-47433}"
if [ -n "$bridge_port" ]; then
  listening=":$(printf '%04X' "$bridge_port") 00000000:0000 0A"
  misses=0
  while kill -0 "$server" 2>/dev/null; do
    sleep 5 &
    wait $! || true
    if grep -q "$listening" /proc/net/tcp /proc/net/tcp6 2>/dev/null; then misses=0; else misses=$((misses + 1)); fi
    if [ "$misses" -ge 3 ]; then
      echo "opencode: the bridge's port $bridge_port left this network namespace (the bridge restarted); stopping so Docker restarts this container inside the bridge's new one" >&2
      kill -TERM "$server" 2>/dev/null || true
      wait "$server" || true
      exit 75
    fi
  done
fi
wait "$server"
