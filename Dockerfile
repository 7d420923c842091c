# syntax=docker/dockerfile:1
# planwarden's image: one image, two entrypoints chosen by the manifests' command
#   node dist/webhook/main.js …      the admission webhook
#   node dist/controller/main.js …   the controller
# Built in a Node image, run on distroless (no shell, no package manager) as 65532.

# --- build: compile TypeScript to dist/ ---
# Debian-based like the runtime, so any platform-specific packages installed here
# (esbuild's binary, for one) match the runtime's libc.
FROM node:20-bookworm-slim AS build
WORKDIR /app
ENV NODE_ENV=development \
    npm_config_fund=false \
    npm_config_audit=false \
    npm_config_update_notifier=false

# Dependencies first, so a source-only change reuses this layer. No install scripts:
# the build needs only tsc.
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts

# The sources (.dockerignore keeps tests, manifests and local files out).
COPY . .
RUN npx tsc -p tsconfig.build.json \
 && npm prune --omit=dev --ignore-scripts \
 && test -f dist/webhook/main.js \
 && test -f dist/controller/main.js

# --- runtime ---
FROM gcr.io/distroless/nodejs20-debian12:nonroot
WORKDIR /app
ENV NODE_ENV=production \
    PATH=/nodejs/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# package.json carries "type": "module", which makes dist/**/*.js ESM.
COPY --from=build --chown=0:0 /app/package.json ./package.json
COPY --from=build --chown=0:0 /app/node_modules ./node_modules
COPY --from=build --chown=0:0 /app/dist ./dist
# Files stay root-owned and read-only to the process: the manifests also mount the root
# filesystem read-only.
USER 65532:65532
# distroless puts node in /nodejs/bin (on PATH above), so the manifests' `command: [node,
# …]` resolves; this default runs the webhook when none is given.
ENTRYPOINT []
CMD ["node", "dist/webhook/main.js"]
