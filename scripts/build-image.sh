#!/usr/bin/env bash
# Builds onceonly's container image with whatever this machine has: docker
# where a daemon answers, buildah otherwise (no daemon; rootless or as root).
#
#   scripts/build-image.sh                       the image onceonly:<version>
#   TAG=registry.example/onceonly:1 scripts/build-image.sh
#   LOCAL_BASES=1 scripts/build-image.sh         bases made here from Debian's and npm's packages
#                                                (scripts/image-base.sh), for a machine that reaches
#                                                no container registry
#
# BUILD_BASE and BASE (environment) choose the bases, as the Dockerfile's
# build arguments do; BUILDAH_ARGS adds arguments to `buildah bud` (a
# volume, say). buildah builds in docker format: the OCI format has no
# HEALTHCHECK, and the image's would be dropped.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(node -p 'require("./package.json").version')
tag=${TAG:-onceonly:${version}}
args=()
if [ "${LOCAL_BASES:-}" = 1 ]; then
  eval "$(scripts/image-base.sh)"
fi
[ -n "${BUILD_BASE:-}" ] && args+=(--build-arg "BUILD_BASE=${BUILD_BASE}")
[ -n "${BASE:-}" ] && args+=(--build-arg "BASE=${BASE}")

if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  echo "building ${tag} with docker" >&2
  docker build "${args[@]}" -t "$tag" .
  echo "run it:  docker run -p 8080:8080 -v onceonly-data:/var/lib/onceonly -v \$PWD/onceonly.yml:/etc/onceonly/onceonly.yml:ro ${tag}" >&2
elif command -v buildah >/dev/null 2>&1; then
  echo "building ${tag} with buildah (no docker daemon answers)" >&2
  # shellcheck disable=SC2086 # BUILDAH_ARGS is a list of arguments on purpose
  buildah ${BUILDAH_GLOBAL_ARGS:-} bud --format docker --layers=false "${args[@]}" ${BUILDAH_ARGS:-} --tag "$tag" .
  echo "run it:  podman run -p 8080:8080 -v onceonly-data:/var/lib/onceonly -v \$PWD/onceonly.yml:/etc/onceonly/onceonly.yml:ro ${tag}" >&2
  echo "     or: buildah push ${tag} docker-daemon:${tag} (where a docker daemon runs), or to a registry" >&2
else
  echo "neither a docker daemon nor buildah is here: install one (Debian: apt-get install buildah)" >&2
  exit 2
fi
echo "$tag"
