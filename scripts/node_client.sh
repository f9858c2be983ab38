#!/bin/sh
# node_client.sh - fetch the godaddy `kubernetes-client` for Node.js (npm), a
# client that builds its whole API from /openapi/v2 (JSON), for the e2e test
# test_node_openapi.sh.
#
#   scripts/node_client.sh           fetch if not cached; print its node_modules
#                                    directory (NODE_PATH for `node`)
#   scripts/node_client.sh --cached  never touch the network: print it if the
#                                    cache holds it, else exit 1
#
# The version is pinned (exact). The cache is $KH_CLIENTS_CACHE, else
# ${XDG_CACHE_HOME:-$HOME/.cache}/kube-harness/clients (as scripts/clients.sh),
# one directory per version. Needs node, npm and the npm registry.
set -eu

PKG=kubernetes-client
PKG_VERSION=9.0.0

cached_only=0
for a in "$@"; do
    case $a in
    --cached) cached_only=1 ;;
    -h | --help)
        sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "node_client.sh: unknown argument '$a'" >&2
        exit 2
        ;;
    esac
done

root=${KH_CLIENTS_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/kube-harness/clients}
dir=$root/node-$PKG-$PKG_VERSION
mods=$dir/node_modules

works() {
    command -v node >/dev/null 2>&1 || return 1
    [ "$(NODE_PATH=$mods node -e "console.log(require('$PKG/package.json').version)" 2>/dev/null)" = "$PKG_VERSION" ]
}

if works; then
    echo "$mods"
    exit 0
fi
if [ $cached_only -eq 1 ]; then
    echo "node_client.sh: $PKG@$PKG_VERSION is not in $root (run scripts/node_client.sh)" >&2
    exit 1
fi
for tool in node npm; do
    command -v $tool >/dev/null 2>&1 || {
        echo "node_client.sh: $tool not found" >&2
        exit 1
    }
done
mkdir -p "$root"
tmp=$(mktemp -d "$root/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm install --no-audit --no-fund --silent "$PKG@$PKG_VERSION" >/dev/null) || {
    echo "node_client.sh: npm install $PKG@$PKG_VERSION failed" >&2
    exit 1
}
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
works || {
    echo "node_client.sh: $PKG@$PKG_VERSION does not load after install" >&2
    exit 1
}
echo "$mods"
