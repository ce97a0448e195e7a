#!/bin/bash
# bare-root.sh (make check-bare, as root): the kit on a bare Debian 12.
# The kit is tried on machines that come with some 800 packages; a
# student's machine, or the dev container's debian:bookworm image, has
# far fewer. No container image can be pulled where the kit is checked,
# so this builds the nearest thing, a minimal bookworm root
# (debootstrap --variant=minbase, from the machine's own Debian mirror),
# and in it, under bubblewrap (its mounts live in a namespace of their
# own, so nothing is left mounted, whatever fails):
#   1. the dev container's Dockerfile, step by step (FROM, ENV, COPY . DIR,
#      WORKDIR, RUN; any other instruction stops the check), on the files
#      of a clean clone of HEAD: its RUN runs tools/mk/bootstrap.sh, the
#      kit's own install step;
#   2. in a clean clone of HEAD at /workspaces/kit, as in Codespaces:
#      devcontainer.json's postCreateCommand (make deps: the corpus), then
#      the student's part of the README's quick start, make test CH=1 on
#      the stubs (every test fails) and make test IMPL=solutions (every
#      test passes), and make deps once more (nothing may be missing).
# It prints the packages each step installed, its time, and the
# verdicts, and fails if a verdict is not the expected one, or if a
# command was not found. Not a step of make check: it takes many minutes.
#
# debootstrap's root is kept in $B/bare/base and reused by later runs;
# each run starts from a fresh copy of it ($B/bare/root). The full log is
# $B/bare/run.log. BARE_MIRROR overrides the mirror.
set -eu
. tools/checks/lib.sh
kit=$(pwd)
B=${B:-build}
dir=$(realpath -m "$B/bare")
base=$dir/base
root=$dir/root
log=$dir/run.log
say() { echo "check-bare: $*"; }
secs() { echo $(($(date +%s) - $1)); }

[ "$(id -u)" -eq 0 ] || { say "run it as root (it builds a Debian root with debootstrap)"; exit 2; }
for t in debootstrap bwrap git; do
    command -v $t >/dev/null 2>&1 || { say "$t is missing: run make deps-dev"; exit 2; }
done

# The machine's Debian mirror for bookworm (deb822 .sources or one-line
# .list files), else Debian's own.
mirror=${BARE_MIRROR:-$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '
    /^$/ { if (s && u) { print u; exit } s = 0; u = "" }
    /^URIs:/ { u = $2 } /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") s = 1 }
    END { if (s && u) print u }' | head -n 1)}
[ -n "$mirror" ] || mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }')
mirror=${mirror:-http://deb.debian.org/debian}

mkdir -p "$dir"
: >"$log"
say "log: $log"
start_all=$(date +%s)

# 0. The root: debootstrap's, reused, then a fresh copy for this run.
if [ -f "$base/.kit-base-ok" ]; then
    say "reusing the minimal bookworm root in $base"
else
    rm -rf "$base"
    say "building a minimal bookworm root (debootstrap --variant=minbase, $mirror)"
    t=$(date +%s)
    nice debootstrap --variant=minbase bookworm "$base" "$mirror" >>"$log" 2>&1 ||
        { say "debootstrap failed; the end of $log:"; tail -n 15 "$log"; exit 1; }
    touch "$base/.kit-base-ok"
    say "debootstrap: $(secs "$t") s"
fi
rm -rf "$root"
cp -a "$base" "$root"
# This machine's network, as the root reaches it: its resolver, and the
# certificates it trusts beyond Debian's (an https proxy's, say; copied
# where ca-certificates, which the Dockerfile's step installs, adds
# them), which node reads only through NODE_EXTRA_CA_CERTS. On a machine
# without any, nothing is copied.
cp /etc/resolv.conf "$root/etc/resolv.conf"
[ -s "$root/etc/hosts" ] || cp /etc/hosts "$root/etc/hosts"
shopt -s nullglob
local_cas=(/usr/local/share/ca-certificates/*.crt)
shopt -u nullglob
if [ ${#local_cas[@]} -gt 0 ]; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp "${local_cas[@]}" "$root/usr/local/share/ca-certificates/"
    say "copied this machine's ${#local_cas[@]} local CA certificate(s) into the root"
fi
packages() { dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Status}\n' | grep -c 'install ok installed'; }
n_base=$(packages)
say "the bare root holds $n_base packages; make: $([ -x "$root/usr/bin/make" ] && echo yes || echo no), git: $([ -x "$root/usr/bin/git" ] && echo yes || echo no)"

# A command in the root, as root, in folder $1, with the environment the
# Dockerfile sets ($envs) and nothing from this machine's.
envs=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb)
[ ${#local_cas[@]} -eq 0 ] || envs+=(NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt)
in_root() {
    local cwd=$1
    shift
    nice bwrap --bind "$root" / --dev /dev --proc /proc --ro-bind /sys /sys \
        --unshare-pid --die-with-parent --cap-add ALL --chdir "$cwd" \
        /usr/bin/env -i "${envs[@]}" "$@"
}
# Its output goes to the log; its last lines to the screen when it fails.
step() {
    local name=$1 rc=0 t
    shift
    t=$(date +%s)
    echo "== $name" >>"$log"
    in_root "$@" >"$dir/step.out" 2>&1 || rc=$?
    cat "$dir/step.out" >>"$log"
    step_secs=$(secs "$t")
    return $rc
}

head=$(git rev-parse HEAD)
src=$dir/src
rm -rf "$src"
git clone -q --no-hardlinks "$kit" "$src"
git -C "$src" checkout -q --detach "$head"
say "the kit: a clean clone of HEAD, $(git -C "$src" log -1 --format='%h %cd' --date=short)"

# 1. The Dockerfile's steps, on the clone's files (COPY . takes the build
#    context, which .dockerignore strips of .git/ and build/).
df=$src/.devcontainer/Dockerfile
[ -f "$df" ] || { fail "no .devcontainer/Dockerfile"; exit 1; }
wd=/
t1=$(date +%s)
n=$n_base
while IFS= read -r line; do
    set -f
    # shellcheck disable=SC2086 # the instruction's words
    set -- $line
    set +f
    ins=${1^^}
    shift
    case $ins in
    FROM)
        [ "$1" = debian:bookworm ] || { fail "the Dockerfile starts FROM $1, and this check builds debian:bookworm"; exit 1; }
        say "Dockerfile: FROM debian:bookworm (here: the debootstrap root)" ;;
    ENV)
        for kv in "$@"; do envs+=("$kv"); done
        say "Dockerfile: ENV $*" ;;
    WORKDIR)
        wd=$1
        mkdir -p "$root$wd"
        say "Dockerfile: WORKDIR $wd" ;;
    COPY)
        if [ $# -ne 2 ] || [ "$1" != . ]; then fail "the check copies only COPY . DIR, not COPY $*"; exit 1; fi
        mkdir -p "$root$2"
        git -C "$src" archive HEAD | tar -x -C "$root$2"
        say "Dockerfile: COPY . $2 (the clone's files, without .git)" ;;
    RUN)
        cmd=${line#*[Rr][Uu][Nn] }
        say "Dockerfile: RUN $cmd"
        if step "Dockerfile: RUN $cmd" "$wd" /bin/sh -c "$cmd"; then
            m=$(packages)
            ok "Dockerfile: RUN: $((m - n)) packages installed ($m in all), $step_secs s"
            n=$m
        else
            fail "Dockerfile: RUN failed after $step_secs s:"
            tail -n 15 "$dir/step.out"
            exit 1
        fi ;;
    *)
        fail "the Dockerfile's $ins is not one this check can run (FROM, ENV, COPY . DIR, WORKDIR, RUN)"
        exit 1 ;;
    esac
done < <(sed -e :a -e '/\\$/N; s/\\\n//; ta' "$df" | grep -Ev '^[[:space:]]*(#|$)')
n_image=$n
say "the image's steps: $((n_image - n_base)) packages, $(secs "$t1") s"

# 2. The student's commands, in a clean clone at /workspaces/kit.
mkdir -p "$root/workspaces"
git clone -q --no-hardlinks "$kit" "$root/workspaces/kit"
git -C "$root/workspaces/kit" checkout -q --detach "$head"
post=$(sed -n 's/^ *"postCreateCommand": *"\(.*\)",\{0,1\} *$/\1/p' "$src/.devcontainer/devcontainer.json")
[ -n "$post" ] || { fail "no postCreateCommand in devcontainer.json"; exit 1; }
post=${post//\$\{containerWorkspaceFolder\}//workspaces/kit}
if step "postCreateCommand: $post" /workspaces/kit /bin/sh -c "$post"; then
    m=$(packages)
    ok "postCreateCommand ($post): $((m - n)) packages installed, $step_secs s; $(grep '^corpus:' "$dir/step.out" | tail -n 1)"
    n=$m
else
    fail "postCreateCommand ($post) failed after $step_secs s:"
    tail -n 15 "$dir/step.out"
fi

verdict() { grep -E '^[0-9]+ passed, [0-9]+ failed' "$dir/step.out" | tail -n 1; }
step "make test CH=1" /workspaces/kit make test CH=1 || true
v=$(verdict)
if [[ $v =~ ^0\ passed,\ ([1-9][0-9]*)\ failed$ ]]; then
    ok "make test CH=1 on the stubs: $v (every test fails), $step_secs s"
else
    fail "make test CH=1 on the stubs: '$v', not every test failing:"
    tail -n 10 "$dir/step.out"
fi
rc=0
step "make test IMPL=solutions" /workspaces/kit make test IMPL=solutions || rc=$?
v=$(verdict)
if [ $rc -eq 0 ] && [[ $v =~ ^[1-9][0-9]*\ passed,\ 0\ failed$ ]]; then
    ok "make test IMPL=solutions: $v, $step_secs s"
else
    fail "make test IMPL=solutions (status $rc): '$v':"
    tail -n 10 "$dir/step.out"
fi
step "make deps, again" /workspaces/kit make deps || true
if grep -q '^deps: every package is installed' "$dir/step.out"; then
    ok "make deps once more: every package is installed"
else
    fail "make deps once more: $(grep '^deps:' "$dir/step.out" | head -n 1)"
fi

# What was missing: a command some step called and the root lacked.
missing=$(grep -aE '(: not found$|command not found)' "$log" | sort -u || true)
if [ -n "$missing" ]; then
    fail "commands the steps called that the root lacks:"
    printf '%s\n' "$missing" | head -n 10
else
    ok "nothing missing: no step called a command the root lacks"
fi
say "packages: $n_base in the bare root, $((n_image - n_base)) installed by the Dockerfile's steps, $((n - n_image)) by make deps after them; $n in all"
say "time: $(secs "$start_all") s in all"
exit $status
