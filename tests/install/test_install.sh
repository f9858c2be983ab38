#!/bin/sh
# test_install.sh BUILD_DIR SOURCE_DIR - kube-harness as a user gets it:
# `meson install --destdir` of BUILD_DIR into a temporary directory, then,
# with pkg-config pointed at that tree only (PKG_CONFIG_PATH and
# PKG_CONFIG_SYSROOT_DIR):
#   1. the starter (templates/operator), copied out of the source tree,
#      is configured, built with --werror and its tests run (a Criterion
#      test with fakeapi in-process, a scenario);
#   2. tests/install/linkcheck.c is linked against the shared libraries
#      (it must need libctrl.so.<soversion>, and run) and then against the
#      static ones (libkh folded in: nothing else of the tree is needed).
# Plain builds only (tests/meson.build): the sanitizers' runtimes would
# have to be linked into the starter too.
set -eu
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kh-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

root="$tmp/root"
DESTDIR="$root" meson install -C "$build" --no-rebuild --quiet >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; echo "test_install: meson install failed" >&2; exit 1; }
pcfile=$(find "$root" -name ctrl.pc | head -n 1)
[ -n "$pcfile" ] || { echo "test_install: no ctrl.pc installed" >&2; exit 1; }
pcdir=$(dirname "$pcfile")
libdir=$(dirname "$pcdir")
for f in fakeapi.pc scenario.pc libctrl.a libctrl.so libfakeapi.a libfakeapi.so \
         libscenario.a libscenario.so; do
    [ -e "$pcdir/$f" ] || [ -e "$libdir/$f" ] || { echo "test_install: $f not installed" >&2; exit 1; }
done
inc=$(find "$root" -type d -name include | head -n 1)
for h in ctrl/client.h ctrl/controllerutil.h ctrl/conditions.h ctrl/version.h \
         fakeapi/fakeapi.h fakeapi/version.h scn/run.h scn/version.h; do
    [ -f "$inc/$h" ] || { echo "test_install: $h not installed" >&2; exit 1; }
done
if [ -d "$inc/kh" ] || ls "$libdir" | grep -q '^libkh'; then
    echo "test_install: the internal libkh was installed" >&2; exit 1
fi

export PKG_CONFIG_PATH="$pcdir"
export PKG_CONFIG_SYSROOT_DIR="$root"
export LD_LIBRARY_PATH="$libdir"

# 1. The starter, out of the source tree.
cp -R "$src/templates/operator" "$tmp/operator"
cd "$tmp/operator"
meson setup build --werror >"$tmp/setup.log" 2>&1 ||
    { cat "$tmp/setup.log"; echo "test_install: the starter did not configure" >&2; exit 1; }
ninja -C build >"$tmp/ninja.log" 2>&1 ||
    { cat "$tmp/ninja.log"; echo "test_install: the starter did not build" >&2; exit 1; }
meson test -C build --print-errorlogs ||
    { echo "test_install: the starter's tests failed" >&2; exit 1; }

# 2. A program on the shared libraries, then on the static ones.
cc=${CC:-cc}
# shellcheck disable=SC2046
$cc -std=c11 -Wall -Werror -o "$tmp/linkcheck" "$src/tests/install/linkcheck.c" \
    $(pkg-config --cflags --libs scenario)
readelf -d "$tmp/linkcheck" | grep -q 'NEEDED.*libctrl\.so\.[0-9]' ||
    { echo "test_install: linkcheck is not linked to libctrl.so" >&2; exit 1; }
readelf -d "$libdir/libctrl.so" | grep -q 'SONAME.*libctrl\.so\.[0-9]' ||
    { echo "test_install: libctrl.so has no soname" >&2; exit 1; }
"$tmp/linkcheck"
# Static: the three archives, then what their .pc files say they need
# (Requires.private as the system's shared libraries, Libs.private).
private_reqs=$(pkg-config --print-requires-private ctrl fakeapi scenario | awk '{print $1}' |
    sort -u)
private_libs=$(sed -n 's/^Libs.private: //p' "$pcdir/ctrl.pc" "$pcdir/fakeapi.pc" \
    "$pcdir/scenario.pc" | tr '\n' ' ')
# shellcheck disable=SC2046,SC2086
$cc -std=c11 -Wall -Werror -o "$tmp/linkcheck-static" "$src/tests/install/linkcheck.c" \
    $(pkg-config --cflags scenario) "$libdir/libscenario.a" "$libdir/libctrl.a" \
    "$libdir/libfakeapi.a" $(pkg-config --libs jansson $private_reqs) $private_libs
if readelf -d "$tmp/linkcheck-static" | grep -q 'NEEDED.*lib\(ctrl\|fakeapi\|scenario\)\.so'; then
    echo "test_install: linkcheck-static needs a kube-harness shared library" >&2; exit 1
fi
LD_LIBRARY_PATH= "$tmp/linkcheck-static"
echo "test_install: ok"
