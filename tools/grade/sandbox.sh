# sandbox.sh: the bubblewrap sandbox a submission is built and run in
# (sourced by grade.sh, grade-all.sh and the check).
#
#   sandbox SUB WORK PREP COMMAND...
#
# Only the system's folders (/usr, /etc, and /bin, /lib, /lib64, /sbin as
# their links into /usr) are there, read-only, and the kit (KIT,
# read-only) without its tests/, solutions/, .git (whose history holds
# the solutions) and build/ (golden headers, other students' results):
# no other folder of the disk, so no other copy of the kit. There is no
# network (and no other namespace is shared); /tmp is private; the
# command runs as process 1 of its own process namespace, so /proc shows
# only the sandbox's processes and /proc/1 is the command itself. Only
# the grading's own variables are passed in (see envs below). The
# folders named by HIDE (all students' results) and HIDE_SUB (all
# submissions) are replaced by empty ones, and only this student's
# submission (read-only), the prepared kit (read-only) and WORK
# (writable) are put back. The sandbox ends with its parent, and every
# process in it with the sandbox.
# BWRAP names the program (default bwrap).
sandbox() {
    local sub=$1 work=$2 prep=$3 hide_kit=() d
    shift 3
    # The kit's tests (and golden values) and its solutions are not needed
    # once the kit's objects are prepared: they are hidden too.
    for d in solutions tests build; do
        [ -n "${KIT:-}" ] && [ -d "$KIT/$d" ] && hide_kit+=(--tmpfs "$KIT/$d")
    done
    # (.git is a folder in a clone, a file in a worktree)
    if [ -n "${KIT:-}" ] && [ -d "$KIT/.git" ]; then hide_kit+=(--tmpfs "$KIT/.git")
    elif [ -n "${KIT:-}" ] && [ -e "$KIT/.git" ]; then hide_kit+=(--ro-bind /dev/null "$KIT/.git"); fi
    # Only the grading's own variables are passed in (--clearenv): the
    # instructor's environment (tokens, say) stays outside, where no
    # process of the submission can read it (/proc/1/environ among them).
    local envs=(--clearenv) v
    for v in $(compgen -e); do
        case "$v" in
        PATH | LANG | LC_ALL | CC | TEST_TIMEOUT | RUN_TIMEOUT | OUTPUT_CAP | GATE | KIT_* | OMP_*)
            envs+=(--setenv "$v" "${!v}") ;;
        esac
    done
    local sys=(--ro-bind /usr /usr --ro-bind /etc /etc)
    for d in bin lib lib64 sbin; do
        if [ -L "/$d" ]; then sys+=(--symlink "$(readlink "/$d")" "/$d")
        elif [ -d "/$d" ]; then sys+=(--ro-bind "/$d" "/$d"); fi
    done
    ${BWRAP:-bwrap} --unshare-all --die-with-parent --new-session --as-pid-1 "${envs[@]}" \
        "${sys[@]}" --dev /dev --proc /proc --tmpfs /tmp \
        ${KIT:+--ro-bind "$KIT" "$KIT"} "${hide_kit[@]}" \
        ${HIDE:+--tmpfs "$HIDE"} ${HIDE_SUB:+--tmpfs "$HIDE_SUB"} \
        --ro-bind "$sub" "$sub" --ro-bind "$prep" "$prep" --bind "$work" "$work" \
        --chdir "$work" "$@"
}

# sandbox_ready: succeeds when the sandbox can start here; else prints why.
sandbox_ready() {
    if ! command -v "${BWRAP:-bwrap}" >/dev/null 2>&1; then
        echo "bubblewrap (${BWRAP:-bwrap}) is not installed (make deps installs it)"
        return 1
    fi
    local err
    if ! err=$(${BWRAP:-bwrap} --unshare-all --die-with-parent --ro-bind / / --dev /dev \
        --proc /proc --tmpfs /tmp true 2>&1); then
        echo "bubblewrap cannot start a sandbox here: $err"
        return 1
    fi
}
