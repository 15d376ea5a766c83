#!/bin/sh
# Runs one libFuzzer target for DS_FUZZ_SECONDS (default 60) from its seed corpus.
# New inputs go to a scratch folder, never into the repository's corpus; a crash is saved
# there too and its path printed, so it can be added to the corpus as a regression input.
set -eu
fuzzer=$1
seeds=$2
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ds-fuzz-XXXXXX")
trap 'rm -rf "$scratch/corpus"' EXIT
mkdir "$scratch/corpus"
echo "fuzzing $(basename "$fuzzer") for ${DS_FUZZ_SECONDS:-60} s; crashes go to $scratch/"
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
"$fuzzer" -max_len=16384 -max_total_time="${DS_FUZZ_SECONDS:-60}" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$scratch/" "$scratch/corpus" "$seeds" 2>&1 |
  grep -E '^(stat::number_of_executed_units|stat::peak_rss|==|SUMMARY|Test unit|artifact_prefix|INFO: Seed|.*ERROR)' || true
# The pipeline hides the fuzzer's status: a finding leaves a crash-/leak-/timeout- file.
if ls "$scratch"/crash-* "$scratch"/leak-* "$scratch"/timeout-* "$scratch"/oom-* >/dev/null 2>&1; then
  echo "finding saved in $scratch"
  exit 1
fi
rm -rf "$scratch"
