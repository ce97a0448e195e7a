#!/bin/sh
# sums.sh write|check DIR: the manifests of the committed run folders
# under DIR (tools/runs/lm/reference). A run folder is DIR itself and
# every folder below it that holds a README.md; its manifest,
# RUN/SHA256SUMS, lists the sha256 of every file in it and in its
# subfolders (data/, sentence/) but README.md, the manifest itself and
# the files of a run folder below it, which has its own.
#
#   write  (make lm-reference-sums) writes every manifest anew: after a
#          new run's files are committed in its folder, never to make a
#          damaged file pass.
#   check  (before the book's data are made from these files) exits 0
#          when every file is as its manifest says; otherwise 1, with one
#          line naming the first file that differs, is missing or is not
#          in the manifest, and what to do.
set -u
usage() { echo "usage: sums.sh write|check DIR"; exit 2; }
[ $# -eq 2 ] || usage
mode=$1 top=${2%/}
[ -d "$top" ] || { echo "sums.sh: $top is not a folder"; exit 2; }

# the run folders under $top, $top first
runs() {
    echo "$top"
    find "$top" -mindepth 2 -name README.md | sed 's|/README.md$||' | LC_ALL=C sort
}

# the files of run folder $1 its manifest lists, relative to it, sorted
files_of() {
    others=$(find "$1" -mindepth 2 -name README.md | sed "s|^$1/||; s|/README.md\$|/|")
    (cd "$1" && find . -type f | sed 's|^\./||') | LC_ALL=C sort |
        awk -v others="$others" '
            BEGIN { n = split(others, o, "\n") }
            $0 == "README.md" || $0 == "SHA256SUMS" { next }
            { for (i = 1; i <= n; i++) if (o[i] != "" && index($0, o[i]) == 1) next; print }'
}

fix="git checkout -- <file> restores the committed one (git status shows what changed); after committing a new run there: make lm-reference-sums"
case "$mode" in
write)
    tmp=$(mktemp) || exit 1
    for r in $(runs); do
        (cd "$r" && files_of . | tr '\n' '\0' | xargs -0 -r sha256sum) >"$tmp" &&
            cp "$tmp" "$r/SHA256SUMS" || { rm -f "$tmp"; exit 1; }
        echo "sums.sh: wrote $r/SHA256SUMS ($(wc -l <"$r/SHA256SUMS" | tr -d ' ') files)"
    done
    rm -f "$tmp" ;;
check)
    for r in $(runs); do
        sums="$r/SHA256SUMS"
        [ -f "$sums" ] || { echo "$sums is missing: the run folder $r has no manifest; make lm-reference-sums writes it"; exit 1; }
        bad=$(cd "$r" && sha256sum --check --strict --quiet SHA256SUMS 2>/dev/null | grep -v ': OK$' | head -n 1)
        if [ -n "$bad" ]; then
            file=${bad%%: *}
            case "$bad" in
            *"open or read"*) why="is missing" ;;
            *) why="differs from its sha256 in $sums (damaged or cut short)" ;;
            esac
            echo "$r/$file $why: ${fix%%;*}; ${fix#*; }" | sed "s|<file>|$r/$file|"
            exit 1
        fi
        extra=$(files_of "$r" | while IFS= read -r f; do
            grep -q "^[0-9a-f]*  $f\$" "$sums" || { echo "$f"; break; }
        done)
        if [ -n "$extra" ]; then
            echo "$r/$extra is not in $sums: a file added to a committed run; make lm-reference-sums lists it (or remove it)"
            exit 1
        fi
    done ;;
*) usage ;;
esac
