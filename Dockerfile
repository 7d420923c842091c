# syntax=docker/dockerfile:1
# planwarden's image: one image, two entrypoints chosen by the manifests' command
#   node dist/webhook/main.js …      the admission webhook
#   node dist/controller/main.js …   the controller
# Built in a Node image, run on distroless (no shell, no package manager) as 65532.
#
# The bases are build arguments: the defaults are the public images; `npm run image`
# (scripts/image.ts) builds both from Debian's packages instead, for machines that reach no
# container registry (docs/operations.md).
#   BUILD_IMAGE    node and npm, and a shell for RUN
#   RUNTIME_IMAGE  node on PATH and a user 65532; nothing else is needed
ARG BUILD_IMAGE=node:20-bookworm-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs20-debian12:nonroot

# --- build: compile TypeScript to dist/ ---
# Debian-based like the runtime, so any platform-specific packages installed here
# (esbuild's binary, for one) match the runtime's libc.
FROM ${BUILD_IMAGE} AS build
WORKDIR /app
ENV NODE_ENV=development \
    npm_config_fund=false \
    npm_config_audit=false \
    npm_config_update_notifier=false

# Dependencies first, so a source-only change reuses this layer. No install scripts:
# the build needs only tsc.
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts

# The sources (.dockerignore keeps tests, manifests and local files out). tsconfig.image.json
# compiles the webhook, the controller and what they import (scripts/ would need test/).
COPY . .
RUN npx tsc -p tsconfig.image.json \
 && npm prune --omit=dev --ignore-scripts \
 && test -f dist/webhook/main.js \
 && test -f dist/controller/main.js

# --- runtime ---
FROM ${RUNTIME_IMAGE}
# The OCI labels: where it comes from, which version, under which licence. VERSION is
# package.json's (the script passes it); REVISION the commit, when known.
ARG VERSION=0.1.0
ARG REVISION=
ARG SOURCE=https://github.com/planwarden/planwarden
LABEL org.opencontainers.image.title="planwarden" \
      org.opencontainers.image.description="Kubernetes admission webhook and controller that guard and run day-2 operation plans" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0"
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
# distroless puts node in /nodejs/bin, Debian's package in /usr/bin (both on PATH above), so the manifests' `command: [node,
# …]` resolves; this default runs the webhook when none is given.
ENTRYPOINT []
CMD ["node", "dist/webhook/main.js"]
