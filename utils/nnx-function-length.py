#!/usr/bin/env python3
"""Lists C++ functions longer than a limit (default 100 lines).

A function's length counts from the first line of its declaration (template
header and signature included) to its closing brace. Functions are found with
a brace matcher that skips comments, string/char/raw-string literals and
preprocessor lines, descends into namespaces, `extern "C"` blocks and class
bodies (methods of classes in anonymous namespaces included), and treats a
lambda as part of the function that contains it (a lambda at namespace scope
counts as a function of its own).

Usage: utils/nnx-function-length.py [--limit N] [PATH...]
With no PATH: every .cpp/.h under lib/, tools/, fuzz/ and python/src. Prints
one line per long function, `path:line: name: N lines (limit L)`, and exits 1 if any.
"""

import argparse
import os
import re
import sys

DEFAULT_ROOTS = ["lib", "tools", "fuzz", "python/src"]
EXTENSIONS = (".cpp", ".h", ".hpp", ".cc", ".c")

_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_NUMBER = re.compile(r"\.?[0-9](?:'?[0-9A-Za-z_.]|[eEpP][+-])*")
_RAW_PREFIX = re.compile(r"(?:u8|u|U|L)?R\"([^()\\\s]{0,16})\(")
_PUNCT3 = {"...", "<=>", "->*"}
_PUNCT2 = {"::", "->", "==", "!=", "<=", "&&", "||", "++", "--", "+=", "-=",
           "*=", "/=", "%=", "&=", "|=", "^=", ".*"}
# `<` and `>` stay single tokens so that `>>` closes two template lists.


def tokenize(text):
    """Yields (token, line) pairs; literals become the token 'LIT'."""
    i, n, line = 0, len(text), 1
    at_line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
            at_line_start = True
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if c == "#" and at_line_start:
            # A preprocessor directive, with its continuation lines.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    line += 1
                    i += 1
                elif text.startswith("/*", i):
                    end = text.find("*/", i + 2)
                    end = n if end < 0 else end + 2
                    line += text.count("\n", i, end)
                    i = end
                    continue
                elif text.startswith("//", i):
                    while i < n and text[i] != "\n":
                        i += 1
                    break
                i += 1
            continue
        at_line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    line += 1
                    i += 1
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            i = end
            continue
        raw = _RAW_PREFIX.match(text, i)
        if raw:
            close = ")" + raw.group(1) + '"'
            end = text.find(close, raw.end())
            end = n if end < 0 else end + len(close)
            yield "LIT", line
            line += text.count("\n", i, end)
            i = end
            continue
        m = _IDENT.match(text, i)
        if m:
            word = m.group(0)
            nxt = text[m.end()] if m.end() < n else ""
            if word in ("u8", "u", "U", "L") and nxt in "\"'":
                i = m.end()  # an encoding prefix: the literal follows
                continue
            yield word, line
            i = m.end()
            continue
        m = _NUMBER.match(text, i)
        if m:
            yield "LIT", line
            i = m.end()
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == "\\":
                    j += 1
                elif text[j] == "\n":
                    break  # unterminated: stop at the line's end
                j += 1
            yield "LIT", line
            i = j + 1
            continue
        for length, table in ((3, _PUNCT3), (2, _PUNCT2)):
            if text[i:i + length] in table:
                yield text[i:i + length], line
                i += length
                break
        else:
            yield c, line
            i += 1


_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLASS_KEYS = {"class", "struct", "union", "enum"}
# Parenthesized parts of a declaration that are not its parameter list.
_NOT_PARAMETERS = {"alignas", "__attribute__", "__declspec", "decltype",
                   "noexcept", "requires"}


class Scanner:
    def __init__(self, path, tokens, limit):
        self.path = path
        self.toks = [t for t, _ in tokens]
        self.lines = [l for _, l in tokens]
        self.limit = limit
        self.long = []

    def match(self, i):
        """Index of the bracket closing the one at `i`."""
        depth = 0
        for j in range(i, len(self.toks)):
            t = self.toks[j]
            if t in _OPEN:
                depth += 1
            elif t in (")", "]", "}"):
                depth -= 1
                if depth == 0:
                    return j
        return len(self.toks) - 1

    def skip_template_header(self, i, end):
        """After `template <...>` starting at `i`, the next index."""
        j = i + 1
        if j >= end or self.toks[j] != "<":
            return j
        depth = 0
        while j < end:
            t = self.toks[j]
            if t in _OPEN:
                j = self.match(j) + 1
                continue
            if t == "<":
                depth += 1
            elif t == ">":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        return j

    def classify(self, start, brace):
        """What the `{` at `brace` opens, given the declaration tokens from
        `start`: ('container' | 'class' | 'function' | 'lambda' | 'data',
        name, index of the name's parameter list or None)."""
        toks = self.toks
        # Leading template headers and attributes.
        i = start
        while i < brace:
            if toks[i] == "template":
                i = self.skip_template_header(i, brace)
            elif toks[i] == "[" and i + 1 < brace and toks[i + 1] == "[":
                i = self.match(i) + 1
            else:
                break
        head = i
        if "namespace" in toks[head:brace]:
            return "container", None, None
        if toks[head:brace] == ["extern", "LIT"]:
            return "container", None, None
        # Top-level structure of the declaration.
        params = None  # index of the first parameter list after a name
        equals = None
        name = None
        j = head
        while j < brace:
            t = toks[j]
            if t == "operator":
                # The operator's symbol is part of the name: `operator()`,
                # `operator==`, `operator<`...
                k = j + 1
                if k < brace and toks[k] in ("(", "["):
                    k = self.match(k) + 1
                while k < brace and toks[k] != "(":
                    k += 1
                name = " ".join(toks[j:k])
                if params is None and k < brace:
                    params = k
                    j = self.match(k) + 1
                else:
                    j = k
                continue
            if t in _OPEN:
                if t == "(" and j > head and toks[j - 1] in _NOT_PARAMETERS:
                    j = self.match(j) + 1
                    continue
                if t == "(" and params is None and equals is None:
                    params = j
                    if j > head and _IDENT.fullmatch(toks[j - 1]):
                        k = j - 1
                        while k - 2 >= head and toks[k - 1] == "::":
                            k -= 2
                        name = "".join(toks[k:j])
                    else:
                        name = "<anonymous>"
                j = self.match(j) + 1
                continue
            if t == "=" and equals is None and params is None:
                equals = j
            j += 1
        if equals is not None:
            # `auto f = [&](...) {` at namespace scope is a function.
            rhs = toks[equals + 1:brace]
            if rhs and rhs[0] == "[":
                var = toks[equals - 1] if equals > head else "<lambda>"
                return "lambda", var, None
            return "data", None, None
        if toks[head] in _CLASS_KEYS or (
                toks[head] in ("typedef", "using") and head + 1 < brace
                and toks[head + 1] in _CLASS_KEYS):
            key = toks[head] if toks[head] in _CLASS_KEYS else toks[head + 1]
            # `struct S *make() {` returns a pointer: a function after all.
            if params is None:
                return ("data" if key == "enum" else "class"), None, None
        if params is not None:
            return "function", name, params
        return "data", None, None

    def body_brace(self, params, brace):
        """The `{` of the body: after a constructor's initializer list,
        member initializers like `x{a}` come first."""
        toks = self.toks
        close = self.match(params)
        colon = None
        for k in range(close + 1, brace):
            if toks[k] == ":":
                colon = k
                break
        if colon is None:
            return brace
        j = brace
        while j < len(toks) and toks[j] == "{" and (
                _IDENT.fullmatch(toks[j - 1]) or toks[j - 1] == ">"):
            j = self.match(j) + 1
            while j < len(toks) and toks[j] != "{":
                if toks[j] in _OPEN:
                    j = self.match(j)
                j += 1
        return j

    def is_macro_statement(self, start, paren, close):
        """Whether `NAME(...)` from `start` is a macro that expands to whole
        declarations: an upper-case name, the statement's first token, and
        the next declaration on a later line."""
        toks = self.toks
        if paren != start + 1 or not re.fullmatch(r"[A-Z][A-Z0-9_]*",
                                                  toks[start]):
            return False
        nxt = close + 1
        return (nxt < len(toks) and self.lines[nxt] > self.lines[close]
                and toks[nxt] not in ("{", ";", ":", "LIT"))

    def scope(self, i, end):
        """Scans a namespace/class/file scope from `i` to `end` (exclusive)."""
        toks = self.toks
        start = i
        while i < end:
            t = toks[i]
            if t in (";", "}"):
                i += 1
                start = i
                continue
            if t in ("public", "private", "protected") and i + 1 < end and \
                    toks[i + 1] == ":":
                i += 2
                start = i
                continue
            if t in ("(", "["):
                close = self.match(i)
                if self.is_macro_statement(start, i, close):
                    start = close + 1
                i = close + 1
                continue
            if t != "{":
                i += 1
                continue
            kind, name, params = self.classify(start, i)
            if kind in ("container", "class"):
                close = self.match(i)
                self.scope(i + 1, close)
                i = close + 1
                start = i
                continue
            if kind == "data":
                i = self.match(i) + 1
                continue
            body = i if params is None else self.body_brace(params, i)
            close = self.match(body)
            length = self.lines[close] - self.lines[start] + 1
            if length > self.limit:
                self.long.append((self.lines[start], name, length))
            i = close + 1
            start = i


def scan_file(path, limit):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    scanner = Scanner(path, list(tokenize(text)), limit)
    scanner.scope(0, len(scanner.toks))
    return scanner.long


def sources(roots):
    for root in roots:
        if os.path.isfile(root):
            yield root
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(EXTENSIONS):
                    yield os.path.join(dirpath, f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--all", action="store_true",
                        help="list every function with its length")
    parser.add_argument("paths", nargs="*", default=DEFAULT_ROOTS)
    args = parser.parse_args()
    found = False
    for path in sources(args.paths):
        for line, name, length in scan_file(path, 0 if args.all else args.limit):
            if args.all or length > args.limit:
                found = found or length > args.limit
                print(f"{path}:{line}: {name}: {length} lines "
                      f"(limit {args.limit})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
