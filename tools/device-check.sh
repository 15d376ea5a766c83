#!/bin/bash
# The CUDA backend's checks on a machine with a device, in one run, every log under OUT:
#   tools/device-check.sh BUILD OUT [SECONDS_FOR_THE_BENCH]
# BUILD is a CUDA build of this checkout (unpacked by ../shared/tools/device-pack.sh on a GPU
# machine, where /tmp/ds-env sets the library and source paths). It prints a summary and
# writes OUT/summary.txt; the exit status is 1 when any check failed.
#   1. the device and what each backend finds (--version);
#   2. the cross-backend unit tests, placement, profiler and device-cli suites, plainly;
#   3. compute-sanitizer: memcheck over the cross-backend tests, and whole runs with
#      --leak-check full (0 bytes may leak) and racecheck;
#   4. every shared model and the control-flow samples on the CPU and the device
#      (tools/device_models.py);
#   5. the bench's gpu section, cut off after SECONDS_FOR_THE_BENCH (default 90).
set -u
build=${1:?usage: device-check.sh BUILD OUT [SECONDS]}
out=${2:?usage: device-check.sh BUILD OUT [SECONDS]}
bench_s=${3:-90}
cd "$(dirname "$0")/.."
mkdir -p "$out"
exec > >(tee "$out/summary.txt") 2>&1
failed=0
exe="$build/app/dynscope"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
mask=(--run data/dynamic/boolean-mask-symbol.json --random-inputs --seed 7
      --input-shape 'data=(64,8)' --device cuda)

# step NAME SECONDS COMMAND...: runs it with its output in OUT/NAME.log, prints the verdict
# and the log's last lines.
step() {
  local name=$1 seconds=$2
  shift 2
  local t0=$SECONDS
  timeout "$seconds" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  printf '== %-28s rc %-3d %4d s\n' "$name" "$rc" $((SECONDS - t0))
  [ "$rc" -eq 0 ] || { failed=1; tail -n 15 "$out/$name.log" | sed 's/^/   | /'; }
  return 0
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
"$exe" --version

for t in test-cuda-elemwise test-cuda-nn test-placement test-profiler; do
  [ -x "$build/tests/$t" ] && step "$t" 300 "$build/tests/$t" --tap
done
step device-cli 300 /usr/bin/env python3 tests/test_device_cli.py
grep -h '^ok\|^not ok' "$out/device-cli.log" | sed 's/^/   /'

step memcheck-cuda-elemwise 150 "$sanitizer" --error-exitcode 9 "$build/tests/test-cuda-elemwise"
step memcheck-cuda-nn 150 "$sanitizer" --error-exitcode 9 "$build/tests/test-cuda-nn"
step leakcheck-boolean-mask 120 "$sanitizer" --leak-check full --error-exitcode 9 "$exe" \
  "${mask[@]}"
grep -h 'LEAK SUMMARY\|ERROR SUMMARY' "$out/leakcheck-boolean-mask.log" | sed 's/^/   /'
step leakcheck-resnet18 150 "$sanitizer" --leak-check full --error-exitcode 9 "$exe" \
  --run ../shared/models/mxnet/gluoncv_resnet18_v1-symbol.json --random-inputs \
  --input-shape 'data=(1,3,224,224)' --device cuda
grep -h 'LEAK SUMMARY\|ERROR SUMMARY' "$out/leakcheck-resnet18.log" | sed 's/^/   /'
step racecheck-boolean-mask 120 "$sanitizer" --tool racecheck --error-exitcode 9 "$exe" \
  "${mask[@]}"

step models 240 /usr/bin/env python3 tools/device_models.py "$build" "$out"
sed 's/^/   /' "$out/models.log"

timeout "$bench_s" "$build/bench/ds-bench" gpu >"$out/bench-gpu.log" 2>&1
echo "== bench gpu (first $bench_s s)"
sed 's/^/   /' "$out/bench-gpu.log"

echo "device checks: $([ $failed -eq 0 ] && echo all passed || echo some failed)"
exit $failed
