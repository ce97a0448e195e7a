#!/bin/sh
# The solutions' tests run clean under valgrind (in-process, no fork, so
# valgrind sees every test): no invalid access, no definite leak.
set -eu
if ! command -v valgrind >/dev/null; then
    echo "valgrind is not installed: run make deps"; exit 1
fi
make --no-print-directory -s valgrind
