#!/bin/sh
# Every C file follows the committed .clang-format.
set -eu
if ! command -v clang-format >/dev/null; then
    echo "clang-format is not installed: run make deps"; exit 1
fi
make --no-print-directory -s format-check && echo "every C file is formatted"
