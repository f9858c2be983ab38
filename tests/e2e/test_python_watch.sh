#!/usr/bin/env bash
# test_python_watch.sh - the official Python client (Debian's python3-kubernetes)
# watching ConfigMaps on `fakeapi serve`: ADDED/MODIFIED/DELETED, resume from a
# resourceVersion, ApiException 410 after compaction.  TAP on stdout; every
# check is skipped when the client is not installed.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
HERE=$(cd "$(dirname "$0")" && pwd)

if ! "$PY" -c 'import kubernetes' >/dev/null 2>&1; then
    skip "official Python client watches" "python3-kubernetes is not installed"
    echo "1..$E2E_N"
    exit 0
fi

server_start

# The script prints "PASS desc" / "FAIL desc: why"; each becomes a TAP line.
OUT=$(timeout 90 "$PY" "$HERE/python_watch.py" "$KUBECONFIG_FILE" "$SERVER_URL" 2>&1)
st=$?
printf '%s\n' "$OUT" >"$SERVER_DIR/python.out"
seen=0
while IFS= read -r line; do
    case $line in
    "PASS "*)
        seen=$((seen + 1))
        OUT=""
        tap_result 0 "${line#PASS }"
        ;;
    "FAIL "*)
        seen=$((seen + 1))
        desc=${line#FAIL }
        OUT="${desc#*: }"
        tap_result 1 "${desc%%: *}"
        ;;
    esac
done <"$SERVER_DIR/python.out"
OUT="exit status $st; output:
$(cat "$SERVER_DIR/python.out")"
[ $st -eq 0 ] && [ $seen -ge 5 ]
tap_result $? "python_watch.py ran every check"

finish
