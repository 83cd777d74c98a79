#!/usr/bin/env bash
# Build the Molecule node image: a fresh RKE2 GPU worker's static part (the
# stand-ins, the diverted grub-probe, /boot, the host's GRUB args and grub.cfg,
# rke2-agent.service, the dgx-h100 sample tree) baked once, FROM the Debian 12
# systemd image of scripts/offline/build-image.sh, with
# extensions/molecule/shared/image/Containerfile. Every apply scenario used to
# build this node task by task at its prepare; now it starts from it.
#
#   scripts/offline/build-node-image.sh [BASE_IMAGE [NODE_IMAGE]]   (`make image`)
#   scripts/offline/build-node-image.sh --remove [NODE_IMAGE]       (`make image-clean`)
#
# The image carries a label with a hash of its recipe: the Containerfile, this
# script, every file it copies (tests/standins/rke2, the bootloader stand-ins,
# the boot simulation, tests/fixtures/gen_sysfs.py), the constants of
# extensions/molecule/shared/vars/main.yml and the base image's id. When any
# of them changes the next run rebuilds (a few seconds: no package is
# installed); otherwise it does nothing. Offline: podman build with
# --pull=never and no network. Needs root and podman.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

REMOVE=0
if [ "${1:-}" = --remove ]; then REMOVE=1; shift; fi
if [ "$REMOVE" = 1 ]; then
  NODE="${1:-localhost/rke2-numa-node:latest}"
  if podman image exists "$NODE"; then podman rmi --force "$NODE" >/dev/null; echo "build-node-image: removed $NODE"; fi
  exit 0
fi
BASE="${1:-localhost/rke2-numa-debian12-systemd:latest}"
NODE="${2:-localhost/rke2-numa-node:latest}"
LABEL=io.maitred.rke2-numa.node-recipe
SHARED=extensions/molecule/shared

die() { echo "build-node-image: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (rootful podman, as Molecule uses it)"
command -v podman >/dev/null 2>&1 || die "podman is missing (make deps installs it)"
podman image exists "$BASE" || die "$BASE is missing (scripts/offline/build-image.sh builds it)"
PYTHON="${PYTHON:-python3}"

# The node's constants, from the one file the scenarios read them from.
var() {
  local value
  value="$(sed -n "s/^$1: *//p" "$SHARED/vars/main.yml")"
  [ -n "$value" ] || die "no $1 in $SHARED/vars/main.yml"
  printf '%s' "$value"
}
MACHINE_ROOT="$(var __rke2_numa_molecule_root)"
HOST_ARGS="$(var __rke2_numa_molecule_host_args)"
STARTS_LOG="$(var __rke2_numa_molecule_starts)"
BOOTLOADER_LOG="$(var __rke2_numa_molecule_bootloader_log)"

INPUTS=(
  "$SHARED/image/Containerfile" "${BASH_SOURCE[0]}" "$SHARED/vars/main.yml" "$SHARED/files/boot.sh"
  tests/standins/rke2/rke2.py tests/standins/rke2/rke2-agent.service
  tests/standins/bootloader/grub-probe tests/standins/bootloader/update-grub tests/fixtures/gen_sysfs.py
)
RECIPE="$({ podman image inspect --format '{{ .Id }}' "$BASE"; sha256sum "${INPUTS[@]}" | cut -c1-64; } | sha256sum | cut -c1-12)"
current="$(podman image inspect --format "{{ index .Labels \"$LABEL\" }}" "$NODE" 2>/dev/null || true)"
if [ "${FORCE:-0}" != 1 ] && [ "$current" = "$RECIPE" ]; then
  echo "build-node-image: $NODE is current (recipe $RECIPE)"
  exit 0
fi

CONTEXT="$(mktemp -d "${TMPDIR:-/var/tmp}/rke2-numa-node.XXXXXX")"
trap 'rm -rf "$CONTEXT"' EXIT
SECONDS=0
"$PYTHON" tests/fixtures/gen_sysfs.py --out "$CONTEXT/samples" --machine dgx-h100 >/dev/null
mv "$CONTEXT/samples/dgx-h100" "$CONTEXT/machine"
cp tests/standins/rke2/rke2.py "$CONTEXT/rke2"
cp tests/standins/rke2/rke2-agent.service tests/standins/bootloader/grub-probe tests/standins/bootloader/update-grub "$CONTEXT/"
cp "$SHARED/files/boot.sh" "$CONTEXT/boot.sh"
cat > "$CONTEXT/update-grub-logged" <<SCRIPT
#!/bin/sh
# Molecule: log the call, then run Debian's update-grub.
printf 'update-grub %s\n' "\$*" >> $BOOTLOADER_LOG
exec /usr/sbin/update-grub "\$@"
SCRIPT
cat > "$CONTEXT/molecule-count-starts.conf" <<UNIT
[Service]
ExecStartPre=/bin/sh -c 'date -u +%%Y-%%m-%%dT%%H:%%M:%%S.%%NZ >> $STARTS_LOG'
UNIT

old_id="$(podman image inspect --format '{{ .Id }}' "$NODE" 2>/dev/null || true)"
echo "build-node-image: building $NODE from $BASE (recipe $RECIPE)"
# runc: crun 1.8.1 (Debian 12) refuses this host's hybrid cgroup layout.
podman build --quiet --pull=never --network=none --runtime=runc \
  --file "$SHARED/image/Containerfile" \
  --build-arg BASE="$BASE" --build-arg MACHINE_ROOT="$MACHINE_ROOT" --build-arg HOST_ARGS="$HOST_ARGS" \
  --build-arg RECIPE="$RECIPE" --tag "$NODE" "$CONTEXT" >/dev/null
if [ -n "$old_id" ] && [ "$old_id" != "$(podman image inspect --format '{{ .Id }}' "$NODE")" ]; then
  podman rmi "$old_id" >/dev/null 2>&1 || true
fi
echo "build-node-image: $NODE ready in ${SECONDS}s (recipe $RECIPE)"
