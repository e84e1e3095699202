#!/usr/bin/env bash
# images.sh: build the service's images with podman from a locally made base, where no image
# registry is reachable (users build with the official node:24-slim: BASE_IMAGE is a build argument).
#
#   scripts/images.sh base     make (or reuse) the base image: a Debian rootfs from mmdebstrap,
#                              cached as a tar, plus this machine's Node 24 binary and npm
#   scripts/images.sh build    base, then the gateway, controller and runner images, and a NATS
#                              image for testcontainers (Debian's nats-server)
#   scripts/images.sh sizes    the images' sizes in bytes, one `name size` a line
#   scripts/images.sh env      print `export CONTAINERS_CONF=…` (podman with runc, see below)
#
# Images (tag latest): agent-runtime-gateway, agent-runtime-controller (Dockerfile.gateway, targets
# gateway and controller), agent-runtime-runner (Dockerfile.runner); the base is
# localhost/agent-runtime/base:node24, the NATS one localhost/agent-runtime/nats:2.9. Every command is idempotent; podman's layer cache makes a
# second build fast.
#
# podman runs with scripts/images/containers.conf (runc and explicit ulimits: crun fails here).
# Environment: IMAGES_CACHE (the rootfs tar and the base's build context, default .tools/images,
# git-ignored), DEBIAN_SUITE (bookworm), NPM_VERSION (npm in the base, default the one on PATH),
# IMAGE_TAG (latest), BUILD_CA_FILE (a CA bundle mounted over the image's during RUN steps, for a
# TLS-inspecting proxy; default NODE_EXTRA_CA_CERTS when set; nothing of it stays in the images).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${IMAGES_CACHE:-$ROOT/.tools/images}
SUITE=${DEBIAN_SUITE:-bookworm}
TAG=${IMAGE_TAG:-latest}
ROOTFS_IMAGE=localhost/agent-runtime/debian:$SUITE
BASE_IMAGE=localhost/agent-runtime/base:node24
NATS_IMAGE=localhost/agent-runtime/nats:2.9
export CONTAINERS_CONF=$ROOT/scripts/images/containers.conf
CA_FILE=${BUILD_CA_FILE:-${NODE_EXTRA_CA_CERTS:-}}
BUILD=(podman build --pull=never)
[[ -n $CA_FILE ]] && BUILD+=(--volume "$CA_FILE:/etc/ssl/certs/ca-certificates.crt:ro")

log() { echo "[images] $*" >&2; }
die() { log "error: $*"; exit 1; }
# need <command or absolute path> <Debian packages>: apt-installs them when missing and root (as CI runs), else says what to install.
need() {
  command -v "$1" >/dev/null && return 0
  [[ $1 == /* && -e $1 ]] && return 0
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    log "installing $2 (apt-get)"
    # shellcheck disable=SC2086 # $2 is a list of package names
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $2 >/dev/null; } || die "apt-get install $2 failed"
    command -v "$1" >/dev/null && return 0
    [[ $1 == /* && -e $1 ]] && return 0
  fi
  die "$1 is needed (Debian: apt-get install $2)"
}
has_image() { podman image exists "$1"; }

rootfs() {
  local tar=$CACHE/debian-$SUITE.tar
  if [[ ! -s $tar ]]; then
    need mmdebstrap mmdebstrap
    log "making a Debian $SUITE rootfs with mmdebstrap (about a minute; cached in $tar)"
    mkdir -p "$CACHE"
    mmdebstrap --quiet --format=tar --variant=minbase --include=ca-certificates "$SUITE" "$tar.partial" || die "mmdebstrap failed"
    mv "$tar.partial" "$tar"
  fi
  has_image "$ROOTFS_IMAGE" || podman import --quiet "$tar" "$ROOTFS_IMAGE" >/dev/null || die "podman import of $tar failed"
}

base() {
  need podman "podman runc uidmap slirp4netns fuse-overlayfs"
  need runc runc
  # Containers on one network find each other by name (testcontainers' network aliases) through this CNI plugin.
  need /usr/lib/cni/dnsname golang-github-containernetworking-plugin-dnsname
  has_image "$BASE_IMAGE" && return 0
  rootfs
  # shellcheck source=/dev/null
  . "$ROOT/scripts/node24.sh"
  local node npm_version context=$CACHE/base-context
  node=$(node -p process.execPath)
  [[ $(node -p 'process.versions.node.split(".")[0]') == 24 ]] || die "the base needs Node 24; $node is $(node --version)"
  npm_version=${NPM_VERSION:-$(npm --version)}
  log "base image: $ROOTFS_IMAGE + node $(node --version) + npm $npm_version"
  rm -rf "$context"; mkdir -p "$context/npm"
  cp "$node" "$context/node"
  (cd "$context" && npm pack --silent "npm@$npm_version" >/dev/null) || die "could not fetch npm $npm_version from the npm registry"
  tar -xzf "$context"/npm-*.tgz -C "$context/npm" --strip-components=1
  "${BUILD[@]}" --quiet --build-arg "BASE_ROOTFS=$ROOTFS_IMAGE" -f "$ROOT/scripts/images/base.Containerfile" -t "$BASE_IMAGE" "$context" >/dev/null \
    || die "building the base image failed"
}

# build_one <image name> <Dockerfile> [target]
build_one() {
  local name=$1 file=$2 start=$SECONDS target=()
  [[ -n ${3:-} ]] && target=(--target "$3")
  "${BUILD[@]}" --build-arg "BASE_IMAGE=$BASE_IMAGE" "${target[@]}" -f "$ROOT/$file" -t "$name:$TAG" "$ROOT" >"$CACHE/build-$name.log" 2>&1 \
    || { tail -n 30 "$CACHE/build-$name.log" >&2; die "building $name failed (log: $CACHE/build-$name.log)"; }
  log "$name:$TAG built in $((SECONDS - start)) s"
}

nats_image() {
  has_image "$NATS_IMAGE" && return 0
  need nats-server nats-server
  local context=$CACHE/nats-context
  rm -rf "$context"; mkdir -p "$context"
  cp "$(command -v nats-server)" "$context/nats-server"
  "${BUILD[@]}" --quiet --build-arg "BASE_ROOTFS=$ROOTFS_IMAGE" -f "$ROOT/scripts/images/nats.Containerfile" -t "$NATS_IMAGE" "$context" >/dev/null \
    || die "building the NATS image failed"
}

build() {
  base
  nats_image
  mkdir -p "$CACHE"
  build_one agent-runtime-gateway Dockerfile.gateway gateway
  build_one agent-runtime-controller Dockerfile.gateway controller
  build_one agent-runtime-runner Dockerfile.runner
}

sizes() {
  for name in agent-runtime-gateway agent-runtime-controller agent-runtime-runner; do
    echo "$name $(podman image inspect --format '{{.Size}}' "$name:$TAG")"
  done
}

case ${1:-} in
  base) base ;;
  build) build ;;
  sizes) sizes ;;
  env) echo "export CONTAINERS_CONF=$CONTAINERS_CONF" ;;
  *) sed -n '2,20p' "$0" >&2; exit 2 ;;
esac
