#!/bin/sh
# clean.sh B: make clean. Empties the build folder B, keeping the
# student's backups (B/backups/, from make reset and make format) and the
# downloaded corpus (B/corpus/).
#
# It deletes nothing unless B is a build folder of this kit: a folder
# strictly below the kit (never the kit itself, its parent, / or a path
# whose .. leads out of it, symbolic links resolved), that the kit made:
# the Makefile writes the marker B/.kit-build in a build folder it
# creates. The default build/ is accepted without the marker (a build/
# made before the marker existed has none). Anything else is refused in
# one line, and nothing is deleted.
set -u
b=${1:-}
if [ -z "$b" ]; then
    echo "make clean: B is empty; nothing deleted."
    exit 2
fi
if [ ! -e "$b" ]; then
    echo "make clean: $b/ does not exist; nothing to remove."
    exit 0
fi
kit=$(pwd -P)
real=$(cd "$b" 2>/dev/null && pwd -P) || {
    echo "make clean: B=$b is not a folder; nothing deleted."
    exit 2
}
case "$real/" in
"$kit"/?*/) ;;
*)
    echo "make clean: refused: B=$b is $real, which is not a folder below the kit ($kit); make clean deletes only the kit's own build folder. Nothing deleted."
    exit 2
    ;;
esac
if [ ! -e "$real/.kit-build" ] && [ "$real" != "$kit/build" ]; then
    echo "make clean: refused: B=$b ($real) holds no $b/.kit-build, the mark the kit leaves in a build folder it made; make clean deletes only that. Nothing deleted."
    exit 2
fi
find "$real" -mindepth 1 -maxdepth 1 ! -name backups ! -name corpus ! -name .kit-build \
    -exec rm -rf {} +
echo "removed $b/ (kept $b/backups/ and the downloaded corpus $b/corpus/ if any)"
