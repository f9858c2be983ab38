#!/bin/sh
# The main job: install, build, and start a fake API server for kubectl.
set -e
cd "$(dirname "$0")/.."
scripts/deps.sh
[ -d build ] || meson setup build --werror >/dev/null
ninja -C build >/dev/null
exec build/fakeapi/fakeapi serve --kubeconfig build/kubeconfig "$@"
