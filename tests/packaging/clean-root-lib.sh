# A clean Debian 12 root for the install tests, built by mmdebstrap from the Debian mirror this
# machine's apt already names (.ci/debian-mirror; bookworm, -updates, -backports (libgpiod 2) and
# -security when the machine has it). The tarball is cached in build/clean-root/ (keyed by the mirror); each test
# unpacks a fresh copy, with its own /dev (device nodes made here, so that changing a node's
# group inside never touches the host's), /proc and /sys.
# Sourced by test-install.sh and test-dkms.sh. Needs root (chroot, mknod, mounts).

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=$src/build/clean-root

say() { printf '%s\n' "$*"; }
fail() { say "FAIL: $*"; exit 1; }

need_root_tools() {
  if [[ $(id -u) -ne 0 ]]; then
    say "SKIPPED: a chroot install test needs root (run: sudo ctest -L packaging)"
    exit 4
  fi
  local t
  for t in mmdebstrap chroot mount mknod; do
    command -v "$t" >/dev/null || fail "'$t' is missing (run: sudo bash .ci/setup test)"
  done
}

# The packages .ci/package wrote for this machine's architecture (and the arch-independent one).
find_debs() {
  local arch
  arch=$(dpkg --print-architecture)
  debs_logger=$(ls "$src"/build/packages/irqloop_*_"$arch".deb 2>/dev/null | tail -1)
  debs_responder=$(ls "$src"/build/packages/irqloop-responder_*_"$arch".deb 2>/dev/null | tail -1)
  debs_dkms=$(ls "$src"/build/packages/irqloop-responder-dkms_*_all.deb 2>/dev/null | tail -1)
  [[ -n $debs_logger && -n $debs_responder && -n $debs_dkms ]] ||
    fail "no packages in build/packages for $arch (run: bash .ci/package)"
}

root_tarball() {
  local mirror key
  mirror=$(bash "$src/.ci/debian-mirror") || fail "no Debian mirror in this machine's apt sources"
  # The security archive too, when the machine has one: its kernel is the one the testbed boots.
  security=$(bash "$src/.ci/debian-mirror" --suite bookworm-security 2>/dev/null) || security=""
  key=$(printf '%s %s' "$mirror" "$security" | md5sum | cut -c1-12)
  tarball=$cache/bookworm-$key.tar
  if [[ ! -s $tarball ]]; then
    mkdir -p "$cache"
    say "== building the clean root (mmdebstrap minbase bookworm, man-db) into build/clean-root/"
    # minbase: essential packages and apt; man-db to read the pages. Everything else the
    # packages need must come from their Depends.
    mmdebstrap --variant=minbase --include=ca-certificates,man-db --quiet bookworm "$cache/partial-$key.tar" \
      "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
      "deb $mirror bookworm-backports main" ${security:+"deb $security bookworm-security main"} \
      >"$cache/mmdebstrap.log" 2>&1 ||
      { tail -20 "$cache/mmdebstrap.log"; fail "mmdebstrap failed (log: build/clean-root/mmdebstrap.log)"; }
    mv "$cache/partial-$key.tar" "$tarball"
  fi
}

root=""
mounted=()
leave_root() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
  mounted=()
  [[ -n $root && -d $root ]] && rm -rf --one-file-system "$root"
}

# enter_root NAME: a fresh copy of the clean root in build/clean-root/NAME.
enter_root() {
  root_tarball
  root=$cache/$1
  leave_root
  root=$cache/$1
  trap leave_root EXIT
  mkdir -p "$root"
  tar -C "$root" -xf "$tarball"
  mount -t proc proc "$root/proc" && mounted+=("$root/proc")
  mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys" && mounted+=("$root/sys")
  mount -t tmpfs -o mode=0755 dev "$root/dev" && mounted+=("$root/dev")
  local n
  for n in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
    IFS=: read -r name maj min <<<"$n"
    mknod -m 0666 "$root/dev/$name" c "$maj" "$min"
  done
  # The real-time run holds /dev/cpu_dma_latency: the same device, a node of our own.
  if [[ -c /dev/cpu_dma_latency ]]; then
    mknod -m 0600 "$root/dev/cpu_dma_latency" c $((16#$(stat -c %t /dev/cpu_dma_latency))) \
      $((16#$(stat -c %T /dev/cpu_dma_latency)))
  fi
  ln -s /proc/self/fd "$root/dev/fd"
  ln -s /proc/self/fd/0 "$root/dev/stdin"
  ln -s /proc/self/fd/1 "$root/dev/stdout"
  ln -s /proc/self/fd/2 "$root/dev/stderr"
  mkdir -p "$root/dev/shm" "$root/dev/pts"
  mount -t tmpfs -o mode=1777 shm "$root/dev/shm" && mounted+=("$root/dev/shm")
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  in_root apt-get update -qq >/dev/null 2>&1 || fail "apt-get update in the clean root failed"
}

in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
  DEBIAN_FRONTEND=noninteractive "$@"; }

# Every file and directory of the root, less apt's and dpkg's bookkeeping, for before/after.
snapshot() {
  (cd "$root" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./tmp \
    -o -path ./var/lib/dpkg -o -path ./var/lib/apt -o -path ./var/cache -o -path ./var/log \
    -o -path ./run \) -prune -o -print | LC_ALL=C sort)
}
