#!/usr/bin/env bash
# Build the Molecule test image: Debian 12 (bookworm) with systemd as PID 1,
# OFFLINE except for the Debian mirror this host's apt already uses (no
# container registry is reachable from our machines and CI), and import it
# into podman.
#
#   scripts/offline/build-image.sh [IMAGE]            (`make image`, `make molecule`)
#   scripts/offline/build-image.sh --remove [IMAGE]   (`make image-clean`: image and cache)
#
#   IMAGE      default localhost/rke2-numa-debian12-systemd:latest
#   env MIRROR     Debian mirror (default: the first Debian URI in /etc/apt)
#       CACHE_DIR  where the rootfs tarball is kept (/var/cache/rke2-numa-molecule)
#       FORCE=1    rebuild the rootfs and re-import even if both are current
#
# Work already done is skipped. The image carries a label with a hash of this
# script (which holds the package list and the container tweaks): when the
# script changes, the next run rebuilds the rootfs and replaces the image; when
# only the image is gone, the cached tarball is re-imported (about 5 s instead
# of about a minute for debootstrap). Needs root, debootstrap and podman.
set -euo pipefail

REMOVE=0
if [ "${1:-}" = --remove ]; then REMOVE=1; shift; fi
IMAGE="${1:-localhost/rke2-numa-debian12-systemd:latest}"
LABEL=io.maitred.rke2-numa.recipe

# Packages on top of debootstrap's minbase. What the scenarios need is baked
# in here because the containers run with `network: none`:
#   systemd systemd-sysv   systemd as /sbin/init (PID 1)
#   python3                Ansible's modules
#   python3-yaml           the RKE2 stand-in (tests/standins/) reads its config with it
#   curl ca-certificates   what RKE2's install and health checks call
#   procps                 ps/pgrep/pkill, for checks on the stand-in's processes
#   grub2-common grub-pc-bin  Debian's real update-grub / grub-mkconfig and
#                          /etc/grub.d/, the BIOS platform files and the default
#                          /etc/default/grub (about 25 MB); the scenarios run the
#                          real update-grub (grub-probe diverted, see
#                          extensions/molecule/shared/node.yml). grub-pc, whose
#                          postinst would install the file, would also install a
#                          bootloader: the file is copied below instead.
#   kubernetes-client      Debian's kubectl (1.20): the rolling scenario's kubectl
#                          host runs it against the API stand-in (tests/standins/kubeapi)
PKGS=systemd,systemd-sysv,python3,python3-yaml,curl,ca-certificates,procps,grub2-common,grub-pc-bin,kubernetes-client

die() { echo "build-image: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (debootstrap and podman import need it)"
for c in debootstrap podman tar sha256sum flock; do
  command -v "$c" >/dev/null 2>&1 || die "$c is missing (make deps installs it)"
done

# Outside the work tree: CI's fresh clones on the same machine reuse it.
CACHE_DIR="${CACHE_DIR:-/var/cache/rke2-numa-molecule}"
FORCE="${FORCE:-0}"

if [ "$REMOVE" = 1 ]; then
  if podman image exists "$IMAGE"; then
    podman rmi --force "$IMAGE" >/dev/null
    echo "build-image: removed $IMAGE"
  fi
  rm -f "$CACHE_DIR"/debian12-systemd-*.tar "$CACHE_DIR"/debian12-systemd-*.tar.tmp
  echo "build-image: removed the cached rootfs tarballs in $CACHE_DIR"
  exit 0
fi

# The first Debian archive URI this host's apt uses (deb822 .sources or .list;
# either kind of file may be missing, hence the `|| true`s under pipefail).
apt_mirror() {
  { grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null || true
    grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true
  } | awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\/.*\/debian\/?$/) { print $i; exit } }'
}
# Tests only: the bytecode cache for the modules Ansible runs in the containers (its docstring says why).
CODE_CACHE="$(dirname "${BASH_SOURCE[0]}")/../../tests/fixtures/code_cache/rke2_numa_code_cache.py"
[ -f "$CODE_CACHE" ] || die "$CODE_CACHE is missing"
# Recipe id: this script's content and the code cache's. A new package or tweak -> new tarball and image.
RECIPE="$(cat "${BASH_SOURCE[0]}" "$CODE_CACHE" | sha256sum | cut -c1-12)"
TARBALL="$CACHE_DIR/debian12-systemd-$RECIPE.tar"

mkdir -p "$CACHE_DIR"
# One build at a time per cache (two `make molecule` at once wait here).
exec 9>"$CACHE_DIR/.lock"
flock 9

image_recipe() {
  podman image inspect --format "{{ index .Labels \"$LABEL\" }}" "$IMAGE" 2>/dev/null || true
}
if [ "$FORCE" != 1 ] && [ "$(image_recipe)" = "$RECIPE" ]; then
  echo "build-image: $IMAGE is current (recipe $RECIPE)"
  exit 0
fi

if [ "$FORCE" = 1 ] || [ ! -s "$TARBALL" ]; then
  WORK="$(mktemp -d "${TMPDIR:-/var/tmp}/rke2-numa-rootfs.XXXXXX")"
  trap 'rm -rf "$WORK"' EXIT
  ROOT="$WORK/rootfs"
  MIRROR="${MIRROR:-$(apt_mirror)}"
  [ -n "$MIRROR" ] || die "no Debian mirror in /etc/apt sources; set MIRROR=http://.../debian"
  echo "build-image: debootstrap bookworm from $MIRROR (packages: $PKGS)"
  SECONDS=0
  debootstrap --variant=minbase --include="$PKGS" bookworm "$ROOT" "$MIRROR" \
    > "$WORK/debootstrap.log" 2>&1 || { tail -n 30 "$WORK/debootstrap.log" >&2; die "debootstrap failed"; }
  echo "build-image: debootstrap took ${SECONDS}s"

  # ---- a good container guest for systemd ----------------------------------
  # Units that make no sense, or fail, in a container: consoles, logind,
  # kernel filesystems podman already mounts (or cannot), timers.
  rm -f "$ROOT"/etc/systemd/system/getty.target.wants/* \
        "$ROOT"/etc/systemd/system/timers.target.wants/* \
        "$ROOT"/etc/systemd/system/multi-user.target.wants/e2scrub_reap.service \
        "$ROOT"/etc/systemd/system/sysinit.target.wants/systemd-pstore.service
  for u in getty@tty1.service console-getty.service systemd-logind.service \
           systemd-remount-fs.service sys-kernel-config.mount \
           sys-kernel-debug.mount sys-kernel-tracing.mount \
           sys-fs-fuse-connections.mount dev-hugepages.mount \
           systemd-firstboot.service systemd-pstore.service \
           apt-daily.timer apt-daily-upgrade.timer; do
    ln -sf /dev/null "$ROOT/etc/systemd/system/$u"
  done
  ln -sf /lib/systemd/system/multi-user.target "$ROOT/etc/systemd/system/default.target"
  # Each container makes its own machine-id at boot.
  : > "$ROOT/etc/machine-id"
  rm -f "$ROOT/var/lib/dbus/machine-id"
  echo localhost > "$ROOT/etc/hostname"
  # Debian's default /etc/default/grub, as grub-pc's postinst would install it.
  cp "$ROOT/usr/share/grub/default/grub" "$ROOT/etc/default/grub"
  # Every python3 here caches the bytecode of the AnsiballZ modules it runs (tests/fixtures/code_cache).
  install -m 0644 "$CODE_CACHE" "$ROOT/usr/lib/python3/dist-packages/rke2_numa_code_cache.py"
  echo 'import rke2_numa_code_cache; rke2_numa_code_cache.install("/var/cache/rke2-numa-code")' \
    > "$ROOT/usr/lib/python3/dist-packages/rke2_numa_code_cache.pth"

  # ---- small: no docs, man pages, locales or apt caches ---------------------
  cat > "$ROOT/etc/dpkg/dpkg.cfg.d/01-nodoc" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/info/*
EOF
  chroot "$ROOT" apt-get clean
  rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/cache/apt/*.bin \
         "$ROOT"/usr/share/man/* "$ROOT"/usr/share/info/* \
         "$ROOT"/var/log/*.log "$ROOT"/var/log/apt/* "$ROOT"/tmp/* \
         "$ROOT"/var/cache/debconf/*-old "$ROOT"/var/lib/dpkg/*-old
  find "$ROOT"/usr/share/doc -mindepth 1 -not -name copyright -not -type d -delete
  find "$ROOT"/usr/share/locale -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
  echo "build-image: rootfs $(du -sh "$ROOT" | cut -f1)"

  tar --numeric-owner --xattrs -C "$ROOT" -cf "$TARBALL.tmp" .
  mv "$TARBALL.tmp" "$TARBALL"
  # Tarballs of older recipes are of no more use.
  find "$CACHE_DIR" -maxdepth 1 -name 'debian12-systemd-*.tar' -not -name "${TARBALL##*/}" -delete
fi
echo "build-image: rootfs tarball $TARBALL ($(du -h "$TARBALL" | cut -f1))"

old_id="$(podman image inspect --format '{{ .Id }}' "$IMAGE" 2>/dev/null || true)"
echo "build-image: importing into podman as $IMAGE"
# container=oci tells systemd it runs in a container; SIGRTMIN+3 is how
# systemd wants to be stopped (halt) instead of SIGTERM.
podman import --quiet \
  --change 'ENV container=oci' \
  --change 'STOPSIGNAL SIGRTMIN+3' \
  --change 'CMD ["/lib/systemd/systemd"]' \
  --change "LABEL $LABEL=$RECIPE" \
  "$TARBALL" "$IMAGE" >/dev/null
# The previous image of this tag (an older recipe) is now untagged: remove it,
# unless a container still uses it.
if [ -n "$old_id" ] && [ "$old_id" != "$(podman image inspect --format '{{ .Id }}' "$IMAGE")" ]; then
  podman rmi "$old_id" >/dev/null 2>&1 || true
fi
echo "build-image: $IMAGE ready (recipe $RECIPE)"
