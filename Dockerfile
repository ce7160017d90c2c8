# syntax=docker/dockerfile:1
# One image for every service: built once, the command selects the process.
#   docker build -t messenger-gateway .                     # default command: the API
#   docker build --build-arg SERVICE=sender -t mgw-sender . # another default command
#   docker build --build-arg SERVICE=all-in-one -t mgw-aio . # the four services in one process
#     (small installs; the same image runs it with `node services/all-in-one/dist/main.js`)
# docker-compose.yml and k8s/ use one image and set `command` per service.

# The same Node as CI (.node-version).
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# ---- build: install everything, compile TypeScript, then drop dev dependencies ----
FROM ${NODE_IMAGE} AS build
# lerna runs the builds through nx: no daemon, no cloud calls inside a build.
ENV NX_DAEMON=false \
    NX_NO_CLOUD=true
WORKDIR /app
COPY package.json package-lock.json lerna.json tsconfig.base.json ./
COPY libs ./libs
COPY services ./services
# npm ci applies these dependency patches (postinstall: patch-package; see patches/README.md).
COPY patches ./patches
RUN --mount=type=cache,target=/root/.npm \
    npm ci --no-audit --no-fund
RUN npx lerna run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && find libs services -name '*.tsbuildinfo' -delete

# ---- runtime: production dependencies and dist/ only, as a non-root user ----
FROM ${NODE_IMAGE} AS runtime
ARG SERVICE=api
# NODE_OPTIONS: the sender's Node options (libs/testing/node-args.mjs) for whatever command runs the
# image — Node 20's young generation, which Node 24 would let grow to 64 MiB semi-spaces under a
# busy sender (~150 MiB more RSS); the other services ran with it on Node 20. A NODE_OPTIONS of
# your own replaces this one: keep the flag in it (docker-compose.yml and k8s/ do).
# HOST: every interface (the container's network is the boundary); `npm start` outside a
# container binds 127.0.0.1 instead.
ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NODE_OPTIONS=--max-semi-space-size=16 \
    HOST=0.0.0.0
WORKDIR /app
# node_modules holds symlinks to the workspace packages (libs/*, services/*), so their
# package.json and dist/ must sit at the same paths as in the build stage.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/libs ./libs
COPY --from=build /app/services ./services
# /app/main.js is the default entry point chosen by SERVICE; fail the build on a typo. The two
# simulators go by the names `npm start` and docker-compose.yml give them: `sandbox` (WhatsApp Web's)
# and `cloud-sandbox` (the Cloud API's, docs/cloud-api.md#the-sandbox).
RUN case "$SERVICE" in \
      api|connection|sender|notifier|all-in-one) target="services/$SERVICE/dist/main.js" ;; \
      sandbox) target="libs/messenger-sim/dist/cli.js" ;; \
      cloud-sandbox) target="libs/cloud-sim/dist/cli.js" ;; \
      *) echo "unknown SERVICE '$SERVICE' (api, connection, sender, notifier, all-in-one, sandbox, cloud-sandbox)" >&2; exit 1 ;; \
    esac \
 && test -f "/app/$target" \
 && ln -s "/app/$target" /app/main.js
# The image's `node` user (uid/gid 1000); k8s runs it with runAsNonRoot and a read-only root.
USER 1000:1000
EXPOSE 3000 9464
# No curl in slim images: Node's fetch. One image serves every service, so the check passes when
# either health port answers: METRICS_PORT (every service's ops port; 9464) or PORT (the API's; 3000).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const e=process.env;Promise.any([e.METRICS_PORT||9464,e.PORT||3000].map(p=>fetch('http://127.0.0.1:'+p+'/healthz').then(r=>{if(!r.ok)throw r.status}))).then(()=>process.exit(0),()=>process.exit(1))"]
# Exec form with node itself (not npm or a shell) so SIGTERM reaches the process and it drains.
CMD ["node", "/app/main.js"]
