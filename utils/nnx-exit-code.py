#!/usr/bin/env python3
"""Runs a command and succeeds only when it exits with the given code.

    nnx-exit-code.py CODE COMMAND [ARG...]

Stricter than LLVM's `not`, which accepts any non-zero exit code: the lit
tests of nnx's error paths need "a clear error and exit 1", never 2 and
never a signal. The command's output passes through unchanged (stderr to stderr);
on a mismatch a line on stderr says what it did instead.
"""
import signal
import subprocess
import sys


def main():
    if len(sys.argv) < 3 or not sys.argv[1].lstrip("-").isdigit():
        sys.stderr.write("usage: nnx-exit-code.py CODE COMMAND [ARG...]\n")
        return 2
    want = int(sys.argv[1])
    code = subprocess.call(sys.argv[2:])
    if code == want:
        return 0
    if code < 0:
        what = "was killed by " + signal.Signals(-code).name
    else:
        what = "exited with %d" % code
    sys.stderr.write("nnx-exit-code.py: %s %s, not with %d\n"
                     % (sys.argv[2], what, want))
    return 1


if __name__ == "__main__":
    sys.exit(main())
