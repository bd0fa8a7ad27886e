# Sourced by the guest test scripts (busybox sh): the project's one test
# library (tests/lib.sh, through the repository share) and $tmp, a scratch
# directory.
tmp=$(mktemp -d)
# shellcheck source=tests/lib.sh
. /opt/frlock/tests/lib.sh
