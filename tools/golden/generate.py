#!/usr/bin/env python3
"""Write the kit's golden values with PyTorch, an implementation independent
of the kit's C code.

    /usr/bin/python3 tools/golden/generate.py tests/golden      (make golden)

Each tools/golden/chN.py module has generate(out_dir), which writes one C
header, tests/golden/chN_golden.h. The headers are committed, so running the
tests never needs Python. Uses Debian's python3-torch (make deps-dev).
"""
import importlib
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: generate.py OUT_DIR")
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    here = pathlib.Path(__file__).resolve().parent
    for mod in sorted(here.glob("ch*.py")):
        m = importlib.import_module("golden." + mod.stem)
        path = m.generate(out)
        print("wrote", path)


if __name__ == "__main__":
    main()
