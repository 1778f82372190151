"""The zoo models that cannot pass yet: name -> (the stage it fails at,
why). test_zoo.py xfails a listed model at that stage only: it fails if
the model fails elsewhere, and fails if it passes (delete its entry).
Stages: zoo.check.STAGES, and 'compile-time' (slower than
test_zoo.COMPILE_LIMIT seconds).

Reasons name the missing piece (the op, the module, the check), as the
survey of docs/Python.md ("The model zoo") found it."""

import collections

Expected = collections.namedtuple("Expected", "stage reason")

EXPECTED = {
}
