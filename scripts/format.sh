#!/usr/bin/env bash
# Checks or fixes the layout of stormark's C++ sources (agent/, bench/, controller/, common/,
# tests/) against .clang-format.
#
#   scripts/format.sh --check     names each file clang-format would change; exits 1 if any
#   scripts/format.sh --fix       rewrites those files in place
#
# The layout is clang-format 14's (Debian 12): other versions break some lines differently,
# so the script uses clang-format-14, or clang-format when that is version 14, and exits 77
# (CTest: skipped) when neither is installed. scripts/install-deps.sh test installs it.
# Files: those git knows in the tree (tracked, or new and not ignored); outside a git
# checkout, every .cc and .h under the four directories.
set -euo pipefail

usage() {
  echo "usage: $0 --check|--fix" >&2
  exit 2
}
[ $# -eq 1 ] || usage
case "$1" in
  --check | --fix) mode=$1 ;;
  *) usage ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

tool=
for candidate in clang-format-14 clang-format; do
  if command -v "$candidate" >/dev/null &&
    "$candidate" --version | grep -q 'clang-format version 14\.'; then
    tool=$candidate
    break
  fi
done
if [ -z "$tool" ]; then
  echo "format: clang-format 14 is not installed (scripts/install-deps.sh test installs it); skipped" >&2
  exit 77
fi

dirs=(agent bench controller common tests)
files=()
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  while IFS= read -r f; do
    [ -f "$f" ] && files+=("$f")
  done < <(git ls-files --cached --others --exclude-standard -- "${dirs[@]}" | grep -E '\.(cc|h)$' | sort -u)
else
  while IFS= read -r f; do
    files+=("$f")
  done < <(find "${dirs[@]}" -type f \( -name '*.cc' -o -name '*.h' \) | sort)
fi
if [ ${#files[@]} -eq 0 ]; then
  echo "format: no sources found under ${dirs[*]}" >&2
  exit 2
fi

if [ "$mode" = "--fix" ]; then
  "$tool" --style=file -i "${files[@]}"
  exit 0
fi

# --dry-run prints "FILE:LINE:COL: warning: code should be clang-formatted" for each change.
status=0
report=$("$tool" --style=file --dry-run "${files[@]}" 2>&1) || status=$?
if [ $status -ne 0 ]; then
  printf '%s\n' "$report" | grep -v 'code should be clang-formatted' | head -5 >&2
  echo "format: $tool failed (exit $status)" >&2
  exit 2
fi
differ=$(printf '%s\n' "$report" |
  sed -n 's/^\(.*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' | sort -u)
if [ -n "$differ" ]; then
  count=$(printf '%s\n' "$differ" | wc -l)
  printf '%s\n' "$differ"
  echo "format: $count of ${#files[@]} files differ from .clang-format; scripts/format.sh --fix rewrites them" >&2
  exit 1
fi
echo "format: ${#files[@]} files match .clang-format"
