#!/usr/bin/env bash
# Installs what is missing (Debian 12, as root), then configures and builds
# momenta in Release into ./build. Safe to run again: it only installs and
# rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake make pkg-config liburing-dev libboost-dev libcli11-dev
          libgtest-dev libgmock-dev libbenchmark-dev python3-numpy)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
