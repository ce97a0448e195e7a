#!/bin/sh
# The solutions pass under AddressSanitizer and UBSan.
set -eu
make --no-print-directory -s test IMPL=solutions SAN=1
