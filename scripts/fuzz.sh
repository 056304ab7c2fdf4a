#!/usr/bin/env bash
# Builds stormark's fuzz targets with clang and libFuzzer (-fsanitize=fuzzer,address) in their
# own build directory, then runs each for SECONDS over its seed corpus (tests/fuzz/corpus).
#
#   scripts/fuzz.sh 20                      # every target, 20 s each
#   scripts/fuzz.sh 3600 plan_fuzzer        # an hour on one target
#   scripts/fuzz.sh --build-dir DIR 6       # what CTest's fuzz.smoke runs
#
# New interesting inputs collect in BUILD_DIR/corpus/TARGET (not in the source tree); a
# crash is written to BUILD_DIR/artifacts/ and fails the script. Exits 77 (CTest: skipped)
# when clang or libFuzzer is missing: scripts/install-deps.sh installs both.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build_dir="$root/build-fuzz"
if [ "${1:-}" = "--build-dir" ]; then
  build_dir=$2
  shift 2
fi
seconds=${1:?usage: scripts/fuzz.sh [--build-dir DIR] SECONDS [TARGET...]}
shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(plan_fuzzer postmark_config_fuzzer agent_config_fuzzer prepare_fuzzer)
fi

if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ is not installed (scripts/install-deps.sh installs it); skipped" >&2
  exit 77
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '#include <cstddef>\n#include <cstdint>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n' \
  > "$probe/probe.cc"
if ! clang++ -fsanitize=fuzzer,address "$probe/probe.cc" -o "$probe/probe" 2>/dev/null; then
  echo "fuzz: clang++ cannot link libFuzzer (libclang-rt-14-dev missing?); skipped" >&2
  exit 77
fi

launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$root" -B "$build_dir" -DCMAKE_CXX_COMPILER=clang++ -DSTORMARK_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
cmake --build "$build_dir" -j "$(nproc)" --target "${targets[@]}" >/dev/null

status=0
for target in "${targets[@]}"; do
  corpus="$build_dir/corpus/$target"
  artifacts="$build_dir/artifacts/$target-"
  mkdir -p "$corpus" "$build_dir/artifacts"
  log="$build_dir/$target.log"
  if "$build_dir/fuzz/$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts" \
      "$corpus" "$root/tests/fuzz/corpus/$target" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz: $target: ok, ${runs:-?} inputs in ${seconds} s"
  else
    echo "fuzz: $target: FAILED; see $log and $build_dir/artifacts/" >&2
    grep -E "ERROR: |SUMMARY: |Test unit written" "$log" >&2 || tail -20 "$log" >&2
    status=1
  fi
done
exit $status
