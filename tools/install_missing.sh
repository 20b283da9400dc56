# Sourced by tools/setup.sh and tools/fuzz.sh (Debian 12, as root):
#   install_missing PACKAGE...
# apt-get installs those of the packages that are not installed yet (after an
# apt-get update), quietly, with no prompt; does nothing when all are there.
install_missing() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "$(basename "$0"): installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
