#!/usr/bin/env bash
# Runs the README's two Quick-start commands where a newcomer stands: in a
# fresh minimal Debian 12 root (debootstrap --variant=minbase bookworm: no
# compiler, no cmake, nothing else), from a clone in /root (mode 700), as root,
# with no terminal on stdin. As root, on a Debian host:
#
#   .ci/fresh_debian.sh            # the root in a new folder under /var/tmp
#   .ci/fresh_debian.sh ROOTDIR    # ROOTDIR must not exist yet
#
# The commands are read from README.md's Quick start (its ```sh blocks), so
# they cannot drift from what the README tells people to run. The copy is a
# clean tree of HEAD (committed work only, no build folders). Each command's
# result is printed on one line:
#   fresh-debian: command 2 exit 0 in 812 s: bash tools/setup.sh && ctest ...
# and the script exits non-zero when any command did. /proc, /sys and /dev are
# mounted inside for the run and unmounted on exit (failure included), then the
# root is removed. MOMENTA_WERROR, when set, is passed to the commands.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "fresh-debian: $*"; }

if ((EUID != 0)); then
  echo "fresh_debian.sh: must run as root (debootstrap, chroot, mount)" >&2
  exit 2
fi

# The Quick start's commands: the lines inside its ```sh blocks.
mapfile -t commands < <(awk '
  /^## / { inside = ($0 == "## Quick start") }
  inside && /^```sh$/ { block = 1; next }
  inside && /^```$/ { block = 0; next }
  inside && block && NF { print }' "$repo/README.md")
if ((${#commands[@]} != 2)); then
  echo "fresh_debian.sh: README.md's Quick start should hold exactly 2 commands, found ${#commands[@]}" >&2
  exit 1
fi

# Debian's archive as the host's apt sources name it (deb.debian.org otherwise).
mirror=$(grep -rhoE 'https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
  | head -n1 | tr -d ' ' || true)
mirror=${mirror:-http://deb.debian.org/debian}

if ! command -v debootstrap >/dev/null; then
  say "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

root=${1:-}
if [[ -z $root ]]; then
  root=$(mktemp -d /var/tmp/momenta-fresh.XXXXXX)
elif [[ -e $root ]]; then
  echo "fresh_debian.sh: $root exists; give a new folder" >&2
  exit 2
else
  mkdir -p "$root"
fi
root=$(cd "$root" && pwd)
chmod 755 "$root"  # it becomes /: mktemp's 700 would shut out every user but root

# Ends what still runs inside the root (a stray server, an interrupted build),
# unmounts everything under it (lazily when busy) and removes it; never
# removes while anything is still mounted there.
cleanup() {
  local status=$? mounts p
  for p in /proc/[0-9]*; do
    [[ $(readlink "$p/root" 2>/dev/null) == "$root" ]] && kill -KILL "${p#/proc/}" 2>/dev/null
  done
  mounts=$(findmnt -rn -o TARGET | grep -E "^$root(/|$)" | sort -r || true)
  if [[ -n $mounts ]]; then
    while read -r m; do umount -R "$m" 2>/dev/null || umount -Rl "$m" 2>/dev/null || true; done <<<"$mounts"
  fi
  if findmnt -rn -o TARGET | grep -qE "^$root(/|$)"; then
    say "still mounted under $root; left in place" >&2
  else
    rm -rf --one-file-system "$root"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "debootstrap --variant=minbase bookworm $root $mirror"
start=$SECONDS
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 || {
  tail -n 20 "$root.debootstrap.log" >&2
  rm -f "$root.debootstrap.log"
  exit 1
}
rm -f "$root.debootstrap.log"
say "root made in $((SECONDS - start)) s"

# The clone: a clean checkout of HEAD, in root's home (mode 700 as on Debian).
git clone -q --no-hardlinks "$repo" "$root/root/momenta"
git -C "$root/root/momenta" checkout -q --detach "$(git -C "$repo" rev-parse HEAD)"
chmod 700 "$root/root"

mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --make-rslave "$root/sys"
mount --rbind /dev "$root/dev"
mount --make-rslave "$root/dev"
cp /etc/resolv.conf "$root/etc/resolv.conf"

env_inside=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8)
[[ -n ${MOMENTA_WERROR:-} ]] && env_inside+=("MOMENTA_WERROR=$MOMENTA_WERROR")
failed=0
for i in "${!commands[@]}"; do
  n=$((i + 1)) cmd=${commands[$i]}
  say "command $n: $cmd"
  start=$SECONDS
  status=0
  # In the background and waited for, so that a signal ends the run at once
  # (cleanup kills what runs inside).
  chroot "$root" /usr/bin/env -i "${env_inside[@]}" /bin/bash -c "cd /root/momenta && $cmd" </dev/null &
  wait $! || status=$?
  say "command $n exit $status in $((SECONDS - start)) s: $cmd"
  ((status == 0)) || failed=1
done
exit "$failed"
