#!/usr/bin/env bash
# test_ruby_watch.sh - Ruby's kubeclient (Debian's ruby-kubeclient), which
# watches only through the legacy /api/v1/watch/... paths, on `fakeapi
# serve`: it lists ConfigMaps, watches from the list's resourceVersion, sees
# kubectl's create, change and delete, resumes from the last resourceVersion
# it saw after the server ends its stream (a closeWatchAfter fault rule), and
# gets the 410 ERROR event after compaction.  TAP on stdout; skipped when
# kubeclient is not installed.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
RB="ruby $HERE/ruby_watch.rb"

if ! command -v ruby >/dev/null 2>&1 || ! ruby -e 'require "kubeclient"' >/dev/null 2>&1; then
    skip "Ruby kubeclient watches" "ruby-kubeclient is not installed"
    echo "1..$E2E_N"
    exit 0
fi

server_start
NS=rb

has_line() { grep -qE -- "$2" "$1"; }
# wait_line FILE ERE: wait up to 20 s for a line of FILE to match; OUT gets FILE.
wait_line() {
    wait_for 20 has_line "$1" "$2"
    local st=$?
    OUT="waiting for /$2/ in:
$(cat "$1")"
    return $st
}

check "kubectl creates the namespace and a first ConfigMap" \
    sh -c "$(printf '%q ' kubectl --kubeconfig "$KUBECONFIG_FILE" --cache-dir "$SERVER_DIR/cache") create namespace $NS &&
           $(printf '%q ' kubectl --kubeconfig "$KUBECONFIG_FILE" --cache-dir "$SERVER_DIR/cache") -n $NS create configmap first --from-literal=v=0"

# Every watch of http.rb (kubeclient's streaming client) ends after 3 events.
check "a closeWatchAfter rule for kubeclient's watches" \
    curl -fsS -X POST -H 'Content-Type: application/json' "$SERVER_URL/fakeapi/v1/faults" \
    -d '{"match":{"verb":"watch","resource":"configmaps","client":"http.rb"},"action":{"closeWatchAfter":3}}'

bg_start follow 60 $RB "$SERVER_URL" "$NS" follow
wait_line "$follow_out" '^LIST [0-9]+ first$'
tap_result $? "kubeclient lists the ConfigMaps with a resourceVersion"

kc -n $NS create configmap a --from-literal=v=1 >/dev/null 2>&1
wait_line "$follow_out" '^EVENT ADDED a [0-9]+ 1$'
tap_result $? "a watch from the list's resourceVersion sees ADDED (kubectl create), not the listed object"
! grep -q '^EVENT ADDED first' "$follow_out"
OUT=$(cat "$follow_out")
tap_result $? "the listed object is not sent again"

kc -n $NS patch configmap a --type merge -p '{"data":{"v":"2"}}' >/dev/null 2>&1
wait_line "$follow_out" '^EVENT MODIFIED a [0-9]+ 2$'
tap_result $? "MODIFIED (kubectl patch)"

kc -n $NS delete configmap a >/dev/null 2>&1
wait_line "$follow_out" '^EVENT DELETED a [0-9]+ 2$'
tap_result $? "DELETED (kubectl delete)"

# The third event ended the stream: kubeclient returns, the script resumes.
wait_line "$follow_out" '^CLOSED [0-9]+$'
tap_result $? "the server ends the stream after three events"
last=$(sed -n 's/^CLOSED //p' "$follow_out" | head -1)
del_rv=$(sed -n 's/^EVENT DELETED a \([0-9]*\) .*/\1/p' "$follow_out" | head -1)
[ -n "$last" ] && [ "$last" = "$del_rv" ]
OUT=$(cat "$follow_out")
tap_result $? "the resume starts from the last resourceVersion seen ($last)"

kc -n $NS create configmap b --from-literal=v=3 >/dev/null 2>&1
kc -n $NS create configmap stop --from-literal=v=4 >/dev/null 2>&1
kc -n $NS delete configmap stop >/dev/null 2>&1
wait_line "$follow_out" '^DONE$'
tap_result $? "the resumed watch sees what came after, up to the end"
# Exactly one event per change: nothing lost or repeated across the resume.
got=$(grep '^EVENT' "$follow_out" | awk '{print $2, $3, $5}' | tr '\n' ';')
want="ADDED a 1;MODIFIED a 2;DELETED a 2;ADDED b 3;ADDED stop 4;DELETED stop 4;"
[ "$got" = "$want" ]
OUT="got:  $got
want: $want
$(cat "$follow_out")"
tap_result $? "every change exactly once, in order, across the resume"
bg_wait "$follow_pid"
OUT=$(cat "$follow_out")
tap_result $? "the follower exits 0"

first_rv=$(sed -n 's/^LIST \([0-9]*\) .*/\1/p' "$follow_out")
check "compact the history" \
    curl -fsS -X POST -H 'Content-Type: application/json' "$SERVER_URL/fakeapi/v1/compact"
check "a watch from a compacted resourceVersion gets the 410 Expired ERROR event" \
    expect_out '^ERROR 410 Expired$' timeout 20 $RB "$SERVER_URL" "$NS" from "$first_rv"

finish
