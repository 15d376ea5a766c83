#!/bin/sh
# The whole test suite, as `make test` runs it:
#   1. every test in the normal tree (build/), valgrind's pass over the CLI included;
#   2. the headless binary (build-nogtk/, -Dgtk=disabled): the CLI suites against it;
#   3. the unit and CLI suite again in build-asan/ under AddressSanitizer and UBSan;
#   4. each libFuzzer target for a bounded time from its seed corpus (build-fuzz/, clang);
#   5. the real-model corpus (tools/realmodels.py: published ONNX models against ONNX Runtime),
#      counted as one test, when its models are in the cache (`make realmodels` fetches them;
#      without them the stage says so and counts as skipped);
# then one closing line "N passed, N failed[, N skipped]" over all five. Exit status 1 on any
# failure.
#
# DS_SKIP_HEADLESS=1, DS_SKIP_ASAN=1, DS_SKIP_FUZZ=1 or DS_SKIP_REALMODELS=1 leave a stage out
# (for quick local runs; CI runs all).
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
status=0
logs="$build/meson-logs/testlog.json"
# The onnx-conformance test's per-op table of ONNX node tests passed (tests/meson.build).
onnx_summary="$build/tests/onnx-conformance-summary.txt"

section() { printf '\n=== %s ===\n' "$1"; }

section "tests ($build)"
rm -f "$onnx_summary" # only this run's table is shown below
meson test -C "$build" --print-errorlogs --num-processes 2 || status=1

if [ "${DS_SKIP_HEADLESS:-0}" != 1 ]; then
  section "the headless binary (build-nogtk, -Dgtk=disabled): CLI suites"
  if [ ! -f build-nogtk/build.ninja ]; then
    meson setup build-nogtk -Dgtk=disabled >/dev/null || status=1
  fi
  # Only the binary: the unit tests are the normal tree's, and the same without GTK.
  if ninja -C build-nogtk app/dynscope >/dev/null; then
    meson test -C build-nogtk --no-rebuild --suite cli --print-errorlogs --num-processes 2 ||
      status=1
    logs="$logs build-nogtk/meson-logs/testlog.json"
  else
    echo "build-nogtk failed to build"; status=1
  fi
fi

if [ "${DS_SKIP_ASAN:-0}" != 1 ]; then
  section "tests under AddressSanitizer + UBSan (build-asan)"
  if [ ! -f build-asan/build.ninja ]; then
    meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
      -Dc_args=-fno-sanitize-recover=all -Dbuildtype=debugoptimized >/dev/null || status=1
  fi
  # Leaks are errors; any report aborts the process, so its test fails. Leaks inside
  # Graphviz, the font stack and the CUDA runtime are theirs (tests/lsan-suppressions.txt).
  # The CUDA runtime maps memory where ASan's shadow gap would be: leave the gap unprotected.
  if ninja -C build-asan >/dev/null; then
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1:protect_shadow_gap=0 \
    LSAN_OPTIONS="suppressions=$(pwd)/tests/lsan-suppressions.txt:print_suppressions=0" \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      meson test -C build-asan --print-errorlogs --num-processes 2 --no-suite valgrind \
      --timeout-multiplier 3 || status=1
    logs="$logs build-asan/meson-logs/testlog.json"
  else
    echo "build-asan failed to build"; status=1
  fi
fi

if [ "${DS_SKIP_FUZZ:-0}" != 1 ]; then
  section "fuzzing (build-fuzz, ${DS_FUZZ_SECONDS:-60} s per target)"
  if [ ! -f build-fuzz/build.ninja ]; then
    CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined \
      -Db_lundef=false -Dnative_arch=false -Dcuda=disabled >/dev/null || status=1
  fi
  if ninja -C build-fuzz >/dev/null; then
    DS_FUZZ_SECONDS=${DS_FUZZ_SECONDS:-60} \
      meson test -C build-fuzz --suite fuzz --print-errorlogs --num-processes 2 || status=1
    logs="$logs build-fuzz/meson-logs/testlog.json"
  else
    echo "build-fuzz failed to build"; status=1
  fi
fi

if [ "${DS_SKIP_REALMODELS:-0}" != 1 ]; then
  section "real models against ONNX Runtime (tools/realmodels.py)"
  # One line of meson's testlog.json format, so that the closing line counts the stage.
  realmodels_log="$build/meson-logs/realmodels-testlog.json"
  mkdir -p "$build/meson-logs"
  if /usr/bin/python3 tools/fetch_real_models.py --check 2>/dev/null; then
    if /usr/bin/python3 tools/realmodels.py "$build"; then
      result=OK
    else
      result=FAIL; status=1
    fi
  else
    # Said here, not counted: the closing line stays "N passed, N failed".
    echo "real-model corpus skipped: its models are not in" \
      "${DS_MODEL_CACHE:-~/.cache/dynscope-models} (fetch them with: make realmodels)"
    result=SKIP
  fi
  if [ "$result" != SKIP ]; then
    printf '{"name": "realmodels", "result": "%s"}\n' "$result" >"$realmodels_log"
    logs="$logs $realmodels_log"
  fi
fi

section "summary"
if [ -f "$onnx_summary" ]; then
  cat "$onnx_summary"
  echo
fi
# shellcheck disable=SC2086
/usr/bin/python3 tools/test-summary.py $logs || status=1
exit $status
