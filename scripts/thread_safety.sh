#!/usr/bin/env bash
# Builds stormark's libraries (stormark_common, stormark_agent, stormark_controller) with clang,
# whose -Wthread-safety (STORMARK_THREAD_SAFETY, on with clang) turns a broken lock contract
# into a compile error: a member ABSL_GUARDED_BY(mu_) used without mu_, a function
# ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) called without it, a lock still held at a return.
#
#   scripts/thread_safety.sh                   # in build-fuzz
#   scripts/thread_safety.sh --build-dir DIR   # what CTest's build.thread_safety runs
#
# The tree is scripts/fuzz.sh's, configured the same way: the fuzz smoke then finds the
# libraries built, so the check costs CI no compile of its own. Exits 77 (CTest: skipped)
# when clang++ is missing.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build_dir="$root/build-fuzz"
if [ "${1:-}" = "--build-dir" ]; then
  build_dir=$2
  shift 2
fi
libraries=(stormark_common stormark_agent stormark_controller)

if ! command -v clang++ >/dev/null; then
  echo "thread safety: clang++ is not installed (scripts/install-deps.sh installs it); skipped" >&2
  exit 77
fi

# The same configuration as scripts/fuzz.sh's, or the two would rebuild each other's tree.
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$root" -B "$build_dir" -DCMAKE_CXX_COMPILER=clang++ -DSTORMARK_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
if ! grep -q '^STORMARK_THREAD_SAFETY:BOOL=ON$' "$build_dir/CMakeCache.txt"; then
  echo "thread safety: $build_dir has STORMARK_THREAD_SAFETY off; nothing would be checked" >&2
  exit 1
fi
# The diagnostics go to stderr; make's progress lines are left out.
if ! cmake --build "$build_dir" -j "$(nproc)" --target "${libraries[@]}" >/dev/null; then
  echo "thread safety: FAILED: clang's -Wthread-safety (or the compile) failed above" >&2
  exit 1
fi
echo "thread safety: ${libraries[*]} build with clang -Wthread-safety -Werror=thread-safety"
