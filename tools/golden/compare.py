#!/usr/bin/env python3
"""Compare two sets of golden headers, numerically.

    python3 tools/golden/compare.py COMMITTED_DIR REGENERATED_DIR

Every tests/golden/*.h in COMMITTED_DIR must have a twin in REGENERATED_DIR
(and the other way round) that says the same thing: the same C tokens in the
same order (names, sizes, every integer exactly), and every floating-point
value equal within a relative tolerance of 1e-9 (plus 1e-12 absolute, for
values near zero). Comments are not compared.

Why not byte for byte: PyTorch on another machine (another BLAS, another
CPU's vector width) sums in another order, and the last digits of a double
change; the committed values were written on one machine. Why 1e-9: the
tests compare the students' float results with these values at 1e-5 or
1e-4 (tests/test_ch*.c), so a difference at 1e-9 cannot change a verdict,
while any real change of a golden value (another seed, another formula, a
changed shape) is far larger. Uses only Python's standard library.
"""
import math
import pathlib
import re
import sys

RTOL = 1e-9
ATOL = 1e-12

TOKEN = re.compile(r"""
    (?P<comment>/\*.*?\*/|//[^\n]*)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<name>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<number>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?[fFuUlL]*)
  | (?P<space>\s+)
  | (?P<other>.)
""", re.S | re.X)


def tokens(text):
    out = []
    for m in TOKEN.finditer(text):
        kind = m.lastgroup
        if kind in ("comment", "space"):
            continue
        out.append((kind, m.group(kind)))
    return out


def is_float(s):
    return any(c in s for c in ".eE") and not s.lower().startswith("0x")


def compare(a_path, b_path):
    """Returns (problems, number of values, largest relative difference)."""
    ta, tb = tokens(a_path.read_text()), tokens(b_path.read_text())
    problems, n, worst = [], 0, 0.0
    if len(ta) != len(tb):
        problems.append(f"{len(ta)} tokens against {len(tb)}: the headers "
                        "do not have the same arrays, names or sizes")
    for (ka, va), (kb, vb) in zip(ta, tb):
        if ka == kb == "number" and is_float(va) and is_float(vb):
            x, y = float(va.rstrip("fFlL")), float(vb.rstrip("fFlL"))
            n += 1
            d = abs(x - y)
            if math.isnan(x) != math.isnan(y) or d > ATOL + RTOL * abs(x):
                problems.append(f"value {va} against {vb} (difference {d:.3g})")
            elif abs(x) > ATOL:
                worst = max(worst, d / abs(x))
        elif (ka, va) != (kb, vb):
            problems.append(f"'{va}' against '{vb}'")
        if len(problems) >= 5:
            break
    return problems, n, worst


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: compare.py COMMITTED_DIR REGENERATED_DIR")
    a, b = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    names_a = {p.name for p in a.glob("*.h")}
    names_b = {p.name for p in b.glob("*.h")}
    bad = 0
    for name in sorted(names_a ^ names_b):
        where = b if name in names_a else a
        print(f"FAIL {name}: missing from {where}")
        bad += 1
    for name in sorted(names_a & names_b):
        problems, n, worst = compare(a / name, b / name)
        if problems:
            bad += 1
            print(f"FAIL {a / name} differs from the regenerated {b / name}:")
            for p in problems:
                print(f"       {p}")
        else:
            print(f"ok   {name}: {n} values within {RTOL:g} "
                  f"(largest relative difference {worst:.2g})")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
