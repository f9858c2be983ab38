#!/usr/bin/env bash
# test_kubectl_watch.sh - kubectl's watches against `fakeapi serve`:
# get -w (all, by name, by label), wait --for=delete, wait --for=jsonpath.
# Each watch runs in the background under `timeout`, its output in a file;
# the script makes changes, ends the watch and reads the lines.  TAP on stdout.
. "$(dirname "$0")/lib.sh"

server_start
D=$SERVER_DIR
KCARGS="--kubeconfig $KUBECONFIG_FILE --cache-dir $D/cache"

cm() { # NAME [LABELS_JSON]
    local labels=${2:-'{}'}
    printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s","namespace":"default","labels":%s}}' \
        "$1" "$labels" | kc create -f - >/dev/null 2>&1 || bail "create configmap $1"
}

# Wait until a watch's output file has at least N lines (the watch is set up).
lines_at_least() { [ "$(wc -l <"$1")" -ge "$2" ]; }

# The "TYPE NAME" pairs of `get -w --output-watch-events` table output on stdin.
events() { awk '$1 ~ /^(ADDED|MODIFIED|DELETED)$/ {print $1, $2}'; }

# Read a watch's output after ending it.
watch_output() { # PID FILE
    bg_stop "$1"
    cat "$2"
}

# --- get -w ----------------------------------------------------------------------
cm pre '{"app":"x"}'
# shellcheck disable=SC2086
bg_start w1 30 kubectl $KCARGS -n default get cm -w --output-watch-events
# shellcheck disable=SC2086
bg_start w2 30 kubectl $KCARGS -n default get cm -w
wait_for 10 lines_at_least "$w1_out" 1 || bail "get -w printed nothing: $(cat "$w1_out")"
wait_for 10 lines_at_least "$w2_out" 2 || bail "get -w printed no table: $(cat "$w2_out")"
cm one '{"app":"x"}'
kc -n default label cm one color=red >/dev/null 2>&1 || bail "label one"
kc -n default delete cm one >/dev/null 2>&1 || bail "delete one"
check "get -w --output-watch-events: ADDED, MODIFIED, DELETED" \
    wait_for 10 grep -q '^DELETED  *one' "$w1_out"
OUT=$(watch_output "$w1_pid" "$w1_out")
want='ADDED pre
ADDED one
MODIFIED one
DELETED one'
got=$(printf '%s\n' "$OUT" | events)
[ "$got" = "$want" ]
tap_result $? "get -w lists the existing object, then each change once, in order"
OUT=$(watch_output "$w2_pid" "$w2_out")
printf '%s\n' "$OUT" | grep -qE '^pre +0 +[0-9]+s'
tap_result $? "get -w prints the table of existing objects"
[ "$(printf '%s\n' "$OUT" | grep -c '^one ')" -eq 3 ]
tap_result $? "get -w prints a row per change"
printf '%s\n' "$OUT" | grep -q '^NAME' && [ "$(printf '%s\n' "$OUT" | grep -c '^NAME')" -eq 1 ]
tap_result $? "get -w keeps the list's columns for watch events (Table watch)"

# --- get NAME -w -----------------------------------------------------------------
cm solo
cm other
# shellcheck disable=SC2086
bg_start w3 30 kubectl $KCARGS -n default get cm solo -w --output-watch-events
wait_for 10 lines_at_least "$w3_out" 1 || bail "get solo -w printed nothing: $(cat "$w3_out")"
kc -n default label cm other touched=yes >/dev/null 2>&1 || bail "label other"
kc -n default label cm solo touched=yes >/dev/null 2>&1 || bail "label solo"
kc -n default delete cm other >/dev/null 2>&1 || bail "delete other"
kc -n default delete cm solo >/dev/null 2>&1 || bail "delete solo"
check "get NAME -w sees the object deleted" wait_for 10 grep -q '^DELETED  *solo' "$w3_out"
OUT=$(watch_output "$w3_pid" "$w3_out")
got=$(printf '%s\n' "$OUT" | events)
[ "$got" = 'ADDED solo
MODIFIED solo
DELETED solo' ]
tap_result $? "get NAME -w sees only that object"

# --- get -w -l -------------------------------------------------------------------
# shellcheck disable=SC2086
bg_start w4 30 kubectl $KCARGS -n default get cm -w -l app=x --output-watch-events
wait_for 10 lines_at_least "$w4_out" 1 || bail "get -w -l printed nothing: $(cat "$w4_out")"
cm match '{"app":"x"}'
cm nomatch '{"app":"y"}'
kc -n default label cm nomatch note=1 >/dev/null 2>&1 || bail "label nomatch"
kc -n default label cm match app=z --overwrite >/dev/null 2>&1 || bail "relabel match"
kc -n default label cm nomatch app=x --overwrite >/dev/null 2>&1 || bail "relabel nomatch"
kc -n default delete cm nomatch >/dev/null 2>&1 || bail "delete nomatch"
check "get -w -l sees the last change" wait_for 10 grep -q '^DELETED  *nomatch' "$w4_out"
OUT=$(watch_output "$w4_pid" "$w4_out")
got=$(printf '%s\n' "$OUT" | events)
[ "$got" = 'ADDED pre
ADDED match
DELETED match
ADDED nomatch
DELETED nomatch' ]
tap_result $? "get -w -l app=x sees only matching objects (leaving = DELETED, joining = ADDED)"

# --- wait --for=delete -------------------------------------------------------------
cm gone
# shellcheck disable=SC2086
bg_start w5 20 kubectl $KCARGS -n default wait cm/gone --for=delete --timeout=15s
sleep 0.5
check "the waited-for object is still there" kc -n default get cm gone
kc -n default delete cm gone --wait=false >/dev/null 2>&1 || bail "delete gone"
bg_wait "$w5_pid"
st=$?
OUT=$(cat "$w5_out")
tap_result $st "wait --for=delete returns when the object is deleted"
check "wait --for=delete times out while the object stays" \
    expect_fail 'timed out' kc -n default wait cm/pre --for=delete --timeout=1s

# --- wait --for=jsonpath -------------------------------------------------------------
cm flag
# shellcheck disable=SC2086
bg_start w6 20 kubectl $KCARGS -n default wait cm/flag --for=jsonpath='{.data.state}'=ready --timeout=15s
sleep 0.5
kc -n default patch cm flag --type=merge -p '{"data":{"state":"starting"}}' >/dev/null 2>&1 ||
    bail "patch flag"
sleep 0.3
kill -0 "$w6_pid" 2>/dev/null
OUT=$(cat "$w6_out")
tap_result $? "wait --for=jsonpath keeps waiting on a non-matching value"
kc -n default patch cm flag --type=merge -p '{"data":{"state":"ready"}}' >/dev/null 2>&1 ||
    bail "patch flag"
bg_wait "$w6_pid"
st=$?
OUT=$(cat "$w6_out")
tap_result $st "wait --for=jsonpath returns when the value matches"
check "wait --for=jsonpath times out on a value never reached" \
    expect_fail 'timed out' kc -n default wait cm/flag --for=jsonpath='{.data.state}'=never --timeout=1s

# wait --for=condition on a pod's status condition, set through /status.
printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}' |
    kc create -f - >/dev/null 2>&1 || bail "create pod p"
# shellcheck disable=SC2086
bg_start w7 20 kubectl $KCARGS -n default wait pod/p --for=condition=Ready --timeout=15s
sleep 0.5
check "patch --subresource=status sets the Ready condition" expect_out 'pod/p patched' \
    kc -n default patch pod p --subresource=status --type=merge \
    -p '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}'
bg_wait "$w7_pid"
st=$?
OUT=$(cat "$w7_out")
tap_result $st "wait --for=condition=Ready returns after the status patch"

finish
