#!/usr/bin/env bash
# Make a Docker engine and the sandbox image available on a machine that has neither.
#
# Idempotent and cached: installs docker.io + debootstrap from Debian, starts dockerd in the
# background if none answers, builds a Debian base image with debootstrap (no image registry is
# reachable here; the rootfs tarball is cached), then builds the project's image.
# Exits 0 with a clear message when no Docker daemon can be started, so the Docker tests skip.
set -uo pipefail

IMAGE="${INVESTIGATOR_SANDBOX_IMAGE:-investigator-sandbox:latest}"
BASE="local/python-base"
CACHE="${INVESTIGATOR_CI_CACHE:-/var/cache/investigator-ci}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
started=$(date +%s)
mkdir -p "$CACHE" 2>/dev/null || CACHE="$(mktemp -d)"

say() { echo "[docker-setup] $*"; }
give_up() {
    say "NO DOCKER: $* -- the Docker sandbox tests will be skipped."
    exit 0
}

if [ "$(id -u)" != 0 ] && ! docker info >/dev/null 2>&1; then
    give_up "not root and no running Docker daemon"
fi

# 1. packages
if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
    say "installing docker.io and debootstrap from Debian"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null || say "apt-get update failed"
    apt-get install -y -q docker.io debootstrap >/dev/null || give_up "apt-get install docker.io failed"
fi
# The Debian CLI matches the Debian daemon (another CLI on PATH may insist on buildx).
DOCKER=docker
[ -x /usr/bin/docker ] && DOCKER=/usr/bin/docker
export DOCKER_BUILDKIT=0

# 2. daemon
if ! $DOCKER info >/dev/null 2>&1; then
    say "starting dockerd in the background (log: /var/log/investigator-dockerd.log)"
    nohup dockerd >/var/log/investigator-dockerd.log 2>&1 &
    for _ in $(seq 1 60); do
        $DOCKER info >/dev/null 2>&1 && break
        sleep 1
    done
    $DOCKER info >/dev/null 2>&1 || give_up "dockerd did not start (see /var/log/investigator-dockerd.log)"
fi
say "daemon up ($($DOCKER version --format '{{.Server.Version}}' 2>/dev/null))"

# 3. base image from Debian packages (the debootstrapped rootfs is cached)
if ! $DOCKER image inspect "$BASE" >/dev/null 2>&1; then
    rootfs="$CACHE/rootfs-bookworm"
    if [ ! -e "$rootfs/.complete" ]; then
        mirror="$(grep -rhoE 'https?://[^ ]*debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
            | grep -v security | head -n1 | tr -d ' ')"
        mirror="${mirror:-http://deb.debian.org/debian}"
        say "debootstrap bookworm from $mirror into $rootfs"
        rm -rf "$rootfs"
        debootstrap --variant=minbase --include=python3,python3-venv,python3-pip,ca-certificates \
            bookworm "$rootfs" "$mirror" >"$CACHE/debootstrap.log" 2>&1 \
            || give_up "debootstrap failed (see $CACHE/debootstrap.log)"
        rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
        touch "$rootfs/.complete"
    fi
    # Trust what this machine trusts: its egress may re-sign TLS with a local CA, and pip in the
    # image build must reach PyPI through it. Only this CI base gets it; the Dockerfile is unchanged.
    [ -s /etc/ssl/certs/ca-certificates.crt ] \
        && cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
    say "importing $BASE"
    tar -C "$rootfs" --exclude=./.complete -c . | $DOCKER import - "$BASE" >/dev/null \
        || give_up "docker import failed"
fi

# 4. the project's image (layer cache makes a rebuild with unchanged dependencies fast)
say "building $IMAGE"
if ! $DOCKER build -q --force-rm --network host --build-arg "BASE_IMAGE=$BASE" -t "$IMAGE" "$ROOT" \
    >"$CACHE/build.log" 2>&1; then
    tail -n 30 "$CACHE/build.log"
    give_up "docker build failed (see $CACHE/build.log)"
fi
say "ready: $IMAGE in $(( $(date +%s) - started ))s"
