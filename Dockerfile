# urlbridge appliance: the bridge (control plane :47433, data plane :47432) runs as root inside the container
# with only the capabilities compose.yaml grants (CHOWN, DAC_OVERRIDE, FOWNER, SETUID, SETGID, KILL), so that it
# can run every terminal command as the project's owner (uid 1000 by default, never 0) under Landlock through
# the sandbox launcher (native/urlbridge-sandbox.c and native/sandbox/), away from its state, its token and its code.
# Multi-stage: native deps and the build happen with a toolchain; the runtime stage has none.
ARG NODE_IMAGE=node:20-bookworm-slim

# --- toolchain: what node-gyp needs to compile better-sqlite3 (no prebuilt binary is downloaded offline),
# and the C compiler for the sandbox launcher (g++ pulls in gcc, which provides cc)
FROM ${NODE_IMAGE} AS toolchain
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /build
COPY package.json package-lock.json ./

# --- production dependencies only; package.json allowScripts lets better-sqlite3 run its install script
FROM toolchain AS prod-deps
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force
# Keep only the compiled addon of better-sqlite3 (its sources and objects are ~25 MB), then prove it loads.
RUN cd node_modules/better-sqlite3 \
 && mv build/Release/better_sqlite3.node /tmp/ \
 && rm -rf build deps src \
 && mkdir -p build/Release \
 && mv /tmp/better_sqlite3.node build/Release/ \
 && node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"
# interactive processes (pty=1): node-pty's prebuilt addon ships in its platform package (no download); prove it
# loads against this image's glibc.
RUN node -e "require('@lydell/node-pty').spawn('/bin/true', [], {}).onExit(() => {})"

# --- build: sandbox launcher (cc), server (tsc) and web UI (vite) into dist/
FROM toolchain AS build
# No install scripts here: the build needs no native addon, and compiling better-sqlite3 twice costs a minute.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
# The content hash of exactly this build context (scripts/image-tag.mjs, the same hash that names the image
# urlbridge:<version>-<hash>), taken before the build writes anything, baked in as dist/BUILD_ID: /api/health's
# buildId. A checkout has no such file and reports "source".
# The testcontainers module (npm run build:testcontainers) is for other people's test suites: not in the image.
RUN node scripts/image-tag.mjs hash > /tmp/BUILD_ID \
 && npm run build:native && npm run build:server:bundle && npm run build:web \
 && dist/native/urlbridge-sandbox --probe \
 && mv /tmp/BUILD_ID dist/BUILD_ID
# Assemble exactly what the runtime needs in one folder; optional folders are copied when present. The code cache's
# training run (below) is removed once it has run.
RUN mkdir -p /out/scripts \
 && cp -R package.json dist /out/ \
 && cp scripts/train-code-cache.mjs /out/scripts/ \
 && for dir in bin plugins; do if [ -d "$dir" ]; then cp -R "$dir" /out/; fi; done

# --- runtime
FROM ${NODE_IMAGE} AS runtime
# git, ripgrep and python3 are what agents' terminal commands and the grep tool expect to find;
# tini reaps the terminal tool's orphaned grandchildren and forwards signals.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ripgrep python3 ca-certificates tini \
 && rm -rf /var/lib/apt/lists/* \
 && git config --system --add safe.directory '*'
# Projects are bind-mounted from the host and usually owned by another uid; git would refuse them as
# "dubious ownership" without the safe.directory line above.

# URLBRIDGE_SCRATCH_DIR: per-project HOME/TMPDIR of terminal commands (compose mounts a tmpfs there, since
# the root filesystem is read-only).
ENV NODE_ENV=production \
    URLBRIDGE_STATE_DIR=/var/lib/urlbridge \
    URLBRIDGE_SCRATCH_DIR=/var/lib/urlbridge-scratch \
    URLBRIDGE_CONTROL_HOST=0.0.0.0 \
    URLBRIDGE_DATA_HOST=0.0.0.0 \
    URLBRIDGE_BROWSE_ROOTS=/projects

# The code and the state belong to root and are closed to others: an agent's command runs as the project
# owner and must neither read the state (capabilities, token) nor read or rewrite the bridge that polices it
# (Landlock denies both anyway; the modes are the second wall). Only /projects belongs to node (uid 1000).
# On start the bridge also fixes an older state volume from the uid-1000 layout (server/main.ts).
WORKDIR /app
COPY --from=prod-deps /build/node_modules ./node_modules
COPY --from=build /out/ ./
# The bundle's V8 code cache (server/code-cache.ts), written here because the root filesystem is read-only at run
# time (and the build stage has no SQLite addon to start the server with): a short run that answers health and an
# agent's first read (scripts/train-code-cache.mjs) compiles what a start and those calls compile, and exiting writes
# its bytecode to dist/server/.v8-cache/ (keyed by this node and each file's size and mtime, which COPY keeps).
RUN node /app/scripts/train-code-cache.mjs /app/dist/server \
 && rm -rf /app/scripts \
 && ls /app/dist/server/.v8-cache/*/bridge-*.bin >/dev/null
RUN mkdir -p /var/lib/urlbridge /var/lib/urlbridge-scratch /projects \
 && chown root:root /var/lib/urlbridge /var/lib/urlbridge-scratch \
 && chmod 0700 /var/lib/urlbridge \
 && chmod 0711 /var/lib/urlbridge-scratch \
 && chown node:node /projects \
 && chmod -R o-rwx /app \
 && chmod 0700 /app \
 && if [ -f /app/bin/urlbridge.js ]; then chmod 0750 /app/bin/urlbridge.js; fi \
 && ln -s /app/bin/urlbridge.js /usr/local/bin/urlbridge
VOLUME ["/var/lib/urlbridge"]
EXPOSE 47433 47432

HEALTHCHECK --interval=5s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.URLBRIDGE_CONTROL_PORT||47433)+'/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "-s", "--"]
CMD ["node", "/app/dist/server/main.js"]
