#!/usr/bin/env python3
"""Prints the exporter's support table (python/nnx/export_ops.py's
registry) or, with --write, puts it into docs/Python.md between its
BEGIN/END markers; with --check, fails if the doc is out of date."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
DOC = os.path.join(ROOT, "docs", "Python.md")
BEGIN = "<!-- BEGIN export support table -->\n"
END = "<!-- END export support table -->\n"


def updated(text, table):
    a = text.index(BEGIN) + len(BEGIN)
    b = text.index(END)
    return text[:a] + table + text[b:]


def main(argv):
    from nnx.export_ops import support_table
    table = support_table()
    if len(argv) < 2:
        sys.stdout.write(table)
        return 0
    with open(DOC) as f:
        text = f.read()
    new = updated(text, table)
    if argv[1] == "--check":
        if new != text:
            print(f"{DOC}: the support table is out of date; run "
                  "utils/nnx-export-support.py --write", file=sys.stderr)
            return 1
        return 0
    if argv[1] == "--write":
        with open(DOC, "w") as f:
            f.write(new)
        return 0
    print(f"usage: {argv[0]} [--write | --check]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
