#!/bin/sh
# bootstrap.sh: as root, on a bare Debian 12 (bookworm) machine, install
# what the kit needs, from the kit's root: first what a bare machine lacks
# before its first command (make and git), then make deps-packages, the
# kit's own install step (make deps's Debian packages, and npm, which
# brings ca-certificates), without chapter 8's corpus (make deps fetches
# it; the dev container at its creation).
#
# The dev container's Dockerfile (.devcontainer/Dockerfile) runs this
# script, and make check-bare (tools/checks/bare-root.sh) runs the
# Dockerfile's steps in a minimal Debian root, so the image, make deps and
# the check share one list of packages, the Makefile's.
set -eu
cd "$(dirname "$0")/../.."
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends make git
make --no-print-directory deps-packages
