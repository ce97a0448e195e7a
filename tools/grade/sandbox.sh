# sandbox.sh: the bubblewrap sandbox a submission is built and run in
# (sourced by grade.sh, grade-all.sh and the check).
#
#   sandbox SUB WORK PREP COMMAND...
#
# Everything is read-only; there is no network (and no other namespace
# is shared); /tmp is private (a kit that lives under /tmp, as a CI
# clone may, is bound back read-only); KIT's solutions/ and tests/ are hidden;
# the folders named by HIDE (all students'
# results) and HIDE_SUB (all submissions) are replaced by empty ones, and
# only this student's submission (read-only), the prepared kit
# (read-only) and WORK (writable) are put back. The sandbox ends with its
# parent, and every process in it with the sandbox.
# BWRAP names the program (default bwrap).
sandbox() {
    local sub=$1 work=$2 prep=$3 hide_kit=() d
    shift 3
    # The kit's tests (and golden values) and its solutions are not needed
    # once the kit's objects are prepared: they are hidden too.
    for d in solutions tests; do
        [ -n "${KIT:-}" ] && [ -d "$KIT/$d" ] && hide_kit+=(--tmpfs "$KIT/$d")
    done
    ${BWRAP:-bwrap} --unshare-all --die-with-parent --new-session \
        --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp \
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
