#!/usr/bin/env bash
# Runs nnx-opt, as a user would (the normal build, not the sanitizer one), on
# inputs fuzz-ir-bytecode saved, and says what each does:
#   fuzz/triage-bytecode.sh NNX_OPT FILE...
# refused      exit 1 with an error (the reader's or nnx's)
# contained    exit 1, a crash of MLIR's reader contained and reported
# FINDING      a signal, another exit status, no error, more than 60 s, or
#              more than 8 GiB of address space
# Prints one line per file and a count per class; fails on any FINDING.
set -uo pipefail
nnx_opt=$1
shift
declare -A count
status=0
for f in "$@"; do
  err=$( (ulimit -v 8388608; timeout 60 "$nnx_opt" "$f" -o /dev/null) 2>&1)
  rc=$?
  if [ $rc = 1 ] && grep -q "crashed reading" <<<"$err"; then
    class=contained
  elif [ $rc = 1 ] && grep -q "error:" <<<"$err"; then
    class=refused
  else
    class=FINDING
    status=1
  fi
  count[$class]=$((${count[$class]:-0} + 1))
  echo "$class (exit $rc) $f: $(grep -m1 'error' <<<"$err" | cut -c1-160)"
done
for c in "${!count[@]}"; do echo "$c: ${count[$c]}"; done
exit $status
