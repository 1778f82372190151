#!/usr/bin/env bash
# Runs the libFuzzer harnesses of a sanitizer build one after another (one
# process each), `make fuzz`'s body:
#   fuzz/run-fuzzers.sh BUILD_DIR SECONDS HARNESS...
# Each starts from its seeds (fuzz/corpus/<harness>, read only) and what
# earlier runs kept in BUILD_DIR/fuzz/<harness>/corpus (new inputs go there,
# never into the tree); crashes, timeouts and out-of-memory inputs land in
# BUILD_DIR/fuzz/<harness>/artifacts/. A line per harness (date, seconds,
# executions, corpus, result) is appended to BUILD_DIR/fuzz/summary.txt.
# FUZZ_RSS_MB (default 4096) and FUZZ_FLAGS (extra libFuzzer flags) apply to
# all. Fails when any harness found something.
set -uo pipefail

build=$1
seconds=$2
shift 2
src=$(cd "$(dirname "$0")" && pwd)
rss=${FUZZ_RSS_MB:-4096}

# The longest input each harness takes: a model piece of the tests fits in
# 16 KiB, a family file in 8 KiB, an .npy or safetensors header in 4 KiB.
max_len() {
  case $1 in
  ir-text | ir-bytecode | surgery) echo 16384 ;;
  family) echo 8192 ;;
  *) echo 4096 ;;
  esac
}

# libFuzzer's dictionary for the harness, if there is one.
dict_flag() {
  case $1 in
  ir-text | surgery) echo "-dict=$src/nnx-ir.dict" ;;
  family) echo "-dict=$src/family.dict" ;;
  esac
}

# ASan's leak check stays on, except in the bytecode harness: a crash of
# MLIR's reader that the CrashRecoveryContext contains leaks what the reader
# had built, by design (docs/Reliability.md). There, too, a malloc that
# cannot be served returns null (LLVM then stops with a fatal error, which
# is contained) as in the tools, instead of ASan's report.
asan_options() {
  if [ "$1" = ir-bytecode ]; then
    echo "detect_leaks=0:allocator_may_return_null=1"
  else
    echo "detect_leaks=1"
  fi
}

# MLIR 22.1's bytecode reader reserves vectors for the counts it reads before
# it finds that the bytes are missing: a corrupted count asks for gigabytes
# it never touches (nnx-opt refuses such a file in milliseconds with under
# 100 MB resident). libFuzzer would report that malloc as out-of-memory;
# for the bytecode harness only the resident set counts.
# Two ways MLIR 22.1's reader fails differ under ASan from the tools:
# - a corrupted region header that claims billions of values makes it resize
#   its value list to that count (parseRegion, docs/Reliability.md):
#   gigabytes, out-of-memory for libFuzzer;
# - an impossible size passed to operator new: the tools get std::bad_alloc,
#   which aborts inside the CrashRecoveryContext (contained), while ASan
#   reports "out of memory" and exits.
# So the bytecode harness runs in libFuzzer's fork mode (one worker at a
# time) with -ignore_ooms and -ignore_crashes: every such input is saved under
# artifacts/ and counted, the fuzzing goes on, and fuzz/triage-bytecode.sh
# then runs nnx-opt on each artifact to tell contained crashes and refusals
# from findings.
malloc_flag() {
  if [ "$1" = ir-bytecode ]; then
    echo "-malloc_limit_mb=1048576 -fork=1 -ignore_ooms=1 -ignore_crashes=1"
  fi
}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && [ -x /usr/lib/llvm-22/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-22/bin/llvm-symbolizer
fi

status=0
for h in "$@"; do
  bin=$build/bin/fuzz-$h
  out=$build/fuzz/$h
  mkdir -p "$out/corpus" "$out/artifacts"
  log=$out/fuzz-$(date -u +%Y%m%dT%H%M%S).log
  echo "fuzz-$h: ${seconds}s, log $log"
  start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  began=$(date +%s)
  # shellcheck disable=SC2046,SC2086
  ASAN_OPTIONS=${ASAN_OPTIONS:-$(asan_options "$h")} \
    "$bin" "$out/corpus" "$src/corpus/$h" -max_total_time="$seconds" \
    -max_len="$(max_len "$h")" -rss_limit_mb="$rss" -timeout=25 \
    -artifact_prefix="$out/artifacts/" -print_final_stats=1 \
    $(dict_flag "$h") $(malloc_flag "$h") ${FUZZ_FLAGS:-} >"$log" 2>&1
  rc=$?
  wall=$(($(date +%s) - began))
  ooms=
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  # Fork mode: the parent's last status line, `#N: cov: ... oom/timeout/crash:
  # a/b/c time: Ss job: ...`.
  forked=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1)
  if [ -n "$forked" ]; then
    execs=$(echo "$forked" | sed 's/^#\([0-9]*\):.*/\1/')
    secs=$(echo "$forked" | sed 's/.* time: \([0-9]*\)s.*/\1/')
    ooms=$(echo "$forked" | sed 's|.*oom/timeout/crash: \([0-9/]*\).*|\1|')
  fi
  corpus=$(ls "$out/corpus" | wc -l)
  seeds=$(ls "$src/corpus/$h" | wc -l)
  if [ $rc = 0 ]; then result="no finding"; else
    result="FINDING (exit $rc): $(grep -m1 -E '^==[0-9]+==ERROR|^SUMMARY|nnx fuzz finding|runtime error' "$log")"
    status=1
  fi
  line="$start fuzz-$h seconds=${secs:-$wall} execs=${execs:-?} corpus=$seeds seeds+$corpus new${ooms:+ oom/timeout/crash=$ooms} result=$result"
  echo "$line" | tee -a "$build/fuzz/summary.txt"
done
exit $status
