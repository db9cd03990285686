# urlbridge appliance: the bridge (control plane :47433, data plane :47432) as the non-root node user.
# Multi-stage: native deps and the build happen with a toolchain; the runtime stage has none.
ARG NODE_IMAGE=node:20-bookworm-slim

# --- toolchain: what node-gyp needs to compile better-sqlite3 (no prebuilt binary is downloaded offline)
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

# --- build: server (tsc) and web UI (vite) into dist/
FROM toolchain AS build
# No install scripts here: the build needs no native addon, and compiling better-sqlite3 twice costs a minute.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build
# Assemble exactly what the runtime needs in one folder; optional folders are copied when present.
RUN mkdir -p /out \
 && cp -R package.json dist /out/ \
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

ENV NODE_ENV=production \
    URLBRIDGE_STATE_DIR=/var/lib/urlbridge \
    URLBRIDGE_CONTROL_HOST=0.0.0.0 \
    URLBRIDGE_DATA_HOST=0.0.0.0 \
    URLBRIDGE_BROWSE_ROOTS=/projects

# The code stays owned by root and read-only for node: an agent's terminal command runs as node and
# must not be able to rewrite the bridge that polices it. Only state and projects belong to node.
WORKDIR /app
COPY --from=prod-deps /build/node_modules ./node_modules
COPY --from=build /out/ ./
RUN mkdir -p /var/lib/urlbridge /projects \
 && chown node:node /var/lib/urlbridge /projects \
 && chmod 0700 /var/lib/urlbridge \
 && if [ -f /app/bin/urlbridge.js ]; then chmod 0755 /app/bin/urlbridge.js; fi \
 && ln -s /app/bin/urlbridge.js /usr/local/bin/urlbridge

USER node
VOLUME ["/var/lib/urlbridge"]
EXPOSE 47433 47432

HEALTHCHECK --interval=5s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.URLBRIDGE_CONTROL_PORT||47433)+'/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "-s", "--"]
CMD ["node", "/app/dist/server/main.js"]
