#!/bin/sh
# deps.sh PACKAGE...: install the Debian packages that are missing.
# Does nothing, at once, when every package is present. Not root: prints
# the exact command to run instead, and fails.
set -eu
missing=""
for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
if [ -z "$missing" ]; then
    echo "deps: every package is installed"
    exit 0
fi
echo "deps: missing:$missing"
if [ "$(id -u)" -ne 0 ]; then
    echo "deps: not root. Run this, then run make again:"
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends$missing"
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
