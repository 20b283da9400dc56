#!/usr/bin/env bash
# tools/format.sh [--check]: formats every tracked C++ file (.h, .cc) with
# clang-format and the repository's .clang-format; --check changes nothing and
# fails, naming the files, when one is not formatted (CI runs it).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
  apt-get install -y -qq clang-format >/dev/null || { echo "format.sh: needs clang-format (apt-get install clang-format)" >&2; exit 2; }
fi
mapfile -t files < <(git ls-files '*.h' '*.cc')
if [[ ${1:-} == --check ]]; then
  unformatted=$(clang-format --dry-run --Werror "${files[@]}" 2>&1 | grep -oE '^[^:]+\.(h|cc):' | sort -u |
                tr -d ':' | tr '\n' ' ' || true)
  if [[ -n $unformatted ]]; then
    echo "format.sh: not formatted (run bash tools/format.sh): $unformatted" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files formatted"
else
  clang-format -i "${files[@]}"
fi
