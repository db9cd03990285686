#!/usr/bin/env bash
# Measures the appliance image for docs/PERFORMANCE.md: size (as stored, and gzipped as a registry would ship
# it) and cold start: `docker run` of a fresh container (new state volume) until /api/health answers, and
# until Docker reports it healthy. Usage: scripts/measure-image.sh [runs=5] [image=urlbridge:measure]
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${1:-5}"
image="${2:-urlbridge:measure}"
base="node:20-bookworm-slim"

if [ "$image" = "urlbridge:measure" ]; then
  echo "building $image (classic builder)..." >&2
  docker build -q -t "$image" . >/dev/null
fi

mb() { awk -v b="$1" 'BEGIN { printf "%.0f MB", b / 1000 / 1000 }'; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

size=$(docker image inspect -f '{{.Size}}' "$image")
base_size=$(docker image inspect -f '{{.Size}}' "$base")
gz=$(docker save "$image" | gzip -1 | wc -c)
echo "image:            $image"
echo "size:             $(mb "$size") (base $base: $(mb "$base_size"), ours on top: $(mb $((size - base_size))))"
echo "size, gzipped:    $(mb "$gz") (docker save | gzip -1)"
echo "top layers:"
docker history --no-trunc --format '{{.Size}}\t{{.CreatedBy}}' "$image" \
  | awk -F '\t' '$1 != "0B" { sub(/^\/bin\/sh -c (#\(nop\) )?/, "", $2); printf "  %8s  %s\n", $1, substr($2, 1, 90) }' | head -6

ready_ms=()
healthy_ms=()
for i in $(seq 1 "$runs"); do
  start=$(now_ms)
  id=$(docker run -d --init -p 127.0.0.1::47433 "$image")
  port=$(docker port "$id" 47433/tcp | head -1 | sed 's/.*://')
  until curl -fsS -o /dev/null "http://127.0.0.1:$port/api/health" 2>/dev/null; do sleep 0.05; done
  ready=$(( $(now_ms) - start ))
  until [ "$(docker inspect -f '{{.State.Health.Status}}' "$id")" = "healthy" ]; do sleep 0.1; done
  healthy=$(( $(now_ms) - start ))
  docker rm -f -v "$id" >/dev/null
  ready_ms+=("$ready")
  healthy_ms+=("$healthy")
  echo "run $i: /api/health answered after ${ready} ms, healthy after ${healthy} ms" >&2
done
echo "cold start, median of $runs: /api/health answers after $(printf '%s\n' "${ready_ms[@]}" | median) ms;" \
  "Docker reports healthy after $(printf '%s\n' "${healthy_ms[@]}" | median) ms (first check runs at the 5 s interval)"
