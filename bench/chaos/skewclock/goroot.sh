#!/bin/sh
# goroot.sh DIR makes DIR a copy of the Go toolchain whose runtime lets
# the chaos harness set each process's wall clock off and make it drift
# (timeasm.go.skew says how and why); only bin/web-skew is built with it
# (make bin/web-skew). A copy, not go build -overlay: the toolchain
# GOTOOLCHAIN fetched lives in the module cache, whose files an overlay
# may not replace. The copy is of hard links (cp -al), cheap, and the two
# files changed are removed and written anew, never written through a
# link into the module cache.
set -eu
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
src=$(go env GOROOT)
version=$(go env GOVERSION)
if [ -f "$dir/VERSION.skew" ] && [ "$(cat "$dir/VERSION.skew")" = "$version" ]; then
	exit 0
fi
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
cp -al "$src" "$dir"
rt=$dir/src/runtime
# The copy's own directory, not its files: a chmod of a hard link would
# change the module cache's file too.
chmod u+w "$rt"
# The kernel's time.now under another name, so that the Go time_now of
# timeasm.go.skew can call it and add the skew.
grep -q 'TEXT time·now<ABIInternal>(SB)' "$rt/time_linux_amd64.s" || {
	echo "goroot.sh: $rt/time_linux_amd64.s has no time·now to rename (a new toolchain?)" >&2
	exit 1
}
sed 's/TEXT time·now<ABIInternal>(SB)/TEXT runtime·timeNowKernel<ABIInternal>(SB)/' \
	"$rt/time_linux_amd64.s" >"$rt/time_linux_amd64.s.new"
rm "$rt/time_linux_amd64.s" "$rt/timeasm.go"
mv "$rt/time_linux_amd64.s.new" "$rt/time_linux_amd64.s"
cp "$here/timeasm.go.skew" "$rt/timeasm.go"
echo "$version" >"$dir/VERSION.skew"
