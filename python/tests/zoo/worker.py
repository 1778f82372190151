"""Each zoo model in a process of its own, without importing PyTorch each
time: a fork server (:mod:`multiprocessing`'s ``forkserver``) imports the
worker modules (PyTorch, torchvision and nnx with them: about 3 s of a
small model's 5) once, and each model runs in a fresh child forked from
it. The server itself runs nothing, so no thread pool crosses the fork;
a child that crashes, stalls or runs out of memory fails its model only,
as a process started from scratch would.

    died, tail = run("zoo.check", "check_main", [name, record], timeout)

calls ``zoo.check.check_main(name, record)`` in a child: ``died`` is None
when it returned, else what happened (its exit status, or the timeout);
``tail`` is the end of what it printed (stdout and stderr together, the
C++ diagnostics too: the child's file descriptors 1 and 2 go to a file)."""

import importlib
import multiprocessing
import os
import sys
import tempfile

#: The modules the fork server imports before its first fork.
PRELOAD = ["zoo.check", "zoo.channels"]

_context = None


def _server():
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(PRELOAD)
    return _context


def _child(module, function, args, log):
    """In the child: output to `log`, then ``module.function(*args)``."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    try:
        getattr(importlib.import_module(module), function)(*args)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


def run(module, function, args, timeout, tail_chars=4000):
    """``module.function(*args)`` in a forked child, at most `timeout`
    seconds: (None or why it failed, the end of its output)."""
    with tempfile.TemporaryDirectory(prefix="nnx-zoo-worker-") as tmp:
        log = os.path.join(tmp, "output.txt")
        child = _server().Process(target=_child,
                                  args=(module, function, list(args), log))
        child.start()
        child.join(timeout)
        died = None
        if child.is_alive():
            child.kill()
            child.join()
            died = f"did not finish within {timeout:g} s (NNX_ZOO_TIMEOUT)"
        elif child.exitcode != 0:
            died = f"the model's process exited {child.exitcode}"
        try:
            with open(log, errors="replace") as f:
                tail = f.read()[-tail_chars:]
        except OSError:
            tail = ""
    return died, tail
