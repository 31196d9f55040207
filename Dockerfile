# onceonly's container image (also a Containerfile for buildah and podman).
#
#   docker build -t onceonly .
#   docker run -p 8080:8080 -v onceonly-data:/var/lib/onceonly \
#     -v ./onceonly.yml:/etc/onceonly/onceonly.yml:ro onceonly
#
# The server binds 0.0.0.0 in the container, which it refuses unless the
# config at ONCEONLY_CONFIG has tenants: docs/deploy.md shows a config with
# tenants and TLS. The bases are build arguments so the image can be built
# from local bases where no registry is reachable (scripts/image-base.sh).
ARG BUILD_BASE=node:24-bookworm
ARG BASE=gcr.io/distroless/cc-debian12

# Build: compile the TypeScript with the dev dependencies, pack the package,
# then install that package as production does, without dev dependencies
# (better-sqlite3's native part is compiled here, where there is a compiler).
FROM ${BUILD_BASE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No install scripts: the build needs only tsc; the native addon is built by the install below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build \
 && npm pack --ignore-scripts --pack-destination /tmp \
 && npm install -g --omit=dev --no-audit --no-fund --prefix /opt/onceonly /tmp/onceonly-*.tgz
# What the running service never reads, pruned to keep the image small: type declarations,
# TypeScript and Markdown files, source maps of dependencies, better-sqlite3's C sources and
# objects; node's symbol table (a crash still names JavaScript frames, not native ones).
RUN cd /opt/onceonly/lib/node_modules/onceonly/node_modules \
 && find . -type f \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.map' -o -name '*.md' \) -delete \
 && rm -rf better-sqlite3/deps better-sqlite3/src better-sqlite3/build/Release/obj* better-sqlite3/build/Release/.deps \
 && install -D -m 0755 "$(command -v node)" /node/usr/local/bin/node && strip /node/usr/local/bin/node \
 && mkdir -p /data/var/lib/onceonly

# Run: node and the installed package on a base with only the C/C++ runtime
# libraries; no shell, no package manager, no compiler.
FROM ${BASE}
COPY --from=build /node/ /
COPY --from=build /opt/onceonly /opt/onceonly
COPY --from=build --chown=65532:65532 /data/ /
USER 65532:65532
WORKDIR /var/lib/onceonly
# The SQLite store and the fail-open journal (./data/) live on the volume.
# For several replicas, set ONCEONLY_STORE to the shared redis:// or postgres:// URL.
ENV PATH=/opt/onceonly/bin:/usr/local/bin:/usr/bin:/bin \
    HOST=0.0.0.0 \
    PORT=8080 \
    ONCEONLY_STORE=sqlite:/var/lib/onceonly/onceonly.db \
    ONCEONLY_CONFIG=/etc/onceonly/onceonly.yml
VOLUME ["/var/lib/onceonly"]
EXPOSE 8080
# Ready when the store answers: GET /readyz on PORT, over HTTPS when ONCEONLY_TLS_CERT is set.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["/usr/local/bin/node", "/opt/onceonly/lib/node_modules/onceonly/dist/cli/healthcheck.js"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/node", "/opt/onceonly/lib/node_modules/onceonly/dist/cli/main.js"]
CMD ["serve"]
