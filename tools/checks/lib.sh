# lib.sh: what the check steps share (sourced from the kit's root, not
# run; POSIX sh). A step says "ok   what" for each thing that holds and
# "FAIL what" for each that does not, and exits with $status: 0 unless
# something failed.
status=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; status=1; }
