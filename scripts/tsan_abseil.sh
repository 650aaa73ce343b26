#!/usr/bin/env bash
# Builds Debian 12's abseil (the same version and patches as the system's libabsl20220623)
# with ThreadSanitizer, as shared libraries with the system's sonames, and prints the folder
# that holds them. scripts/sanitize.sh tsan puts that folder first on the tests'
# LD_LIBRARY_PATH, so the tests (and gRPC and protobuf, which use abseil too) load the
# instrumented copy: ThreadSanitizer then sees absl::Mutex, which it cannot in the
# uninstrumented system library, and does not report every access that a Mutex orders as a
# race.
#
#   dir=$(scripts/tsan_abseil.sh)     # cached under ~/.cache/sluice-deps; safe to run twice
#
# The source comes from Debian's registry (a deb-src entry in a private apt configuration, so
# the machine's own sources stay as they are), checked against the checksums below.
set -euo pipefail
version=20220623.1
debian_revision=1+deb12u2
orig_sha256=abfe2897f3a30edaa74bc34365afe3c2a3cd012091a97dc7e008f7016adcd5fe
debian_sha256=e08490fc7b6f3beca1925953b0c4fb92df2de5e2a01295e4641e2a3d4e528eeb

installed=$(dpkg-query -W -f '${Version}' libabsl20220623 2>/dev/null || true)
if [ "$installed" != "$version-$debian_revision" ]; then
  echo "tsan_abseil.sh: the system's abseil is '$installed', this script builds $version-$debian_revision;" \
       "update the version and checksums here to match it" >&2
  exit 1
fi

cache=${SLUICE_DEPS_CACHE:-$HOME/.cache/sluice-deps}
out=$cache/abseil-$version-$debian_revision-tsan
if [ -f "$out/.done" ]; then echo "$out/lib"; exit 0; fi
mkdir -p "$cache"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

orig=$cache/abseil_$version.orig.tar.gz
deb=$cache/abseil_$version-$debian_revision.debian.tar.xz
if ! echo "$orig_sha256  $orig" | sha256sum -c --quiet >/dev/null 2>&1 ||
   ! echo "$debian_sha256  $deb" | sha256sum -c --quiet >/dev/null 2>&1; then
  echo "tsan_abseil.sh: fetching abseil $version-$debian_revision's source from Debian" >&2
  awk 'BEGIN{RS=""} /Suites: bookworm/ {print; exit}' /etc/apt/sources.list.d/debian.sources |
    sed -E 's/^Types:.*/Types: deb deb-src/' > "$work/src.sources"
  [ -s "$work/src.sources" ] || { echo "tsan_abseil.sh: no bookworm entry in /etc/apt/sources.list.d/debian.sources" >&2; exit 1; }
  apt_opts=(-o "Dir::Etc::sourcelist=$work/src.sources" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$work/lists"
            -o "Dir::Cache=$work/cache")
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
  apt-get "${apt_opts[@]}" update >&2
  (cd "$work" && apt-get "${apt_opts[@]}" source --download-only "abseil=$version-$debian_revision" >&2)
  echo "$orig_sha256  $work/abseil_$version.orig.tar.gz" | sha256sum -c --quiet
  echo "$debian_sha256  $work/abseil_$version-$debian_revision.debian.tar.xz" | sha256sum -c --quiet
  mv "$work/abseil_$version.orig.tar.gz" "$orig"
  mv "$work/abseil_$version-$debian_revision.debian.tar.xz" "$deb"
fi

src=$work/src
mkdir -p "$src"
tar -xzf "$orig" -C "$src" --strip-components=1
tar -xJf "$deb" -C "$src"
while read -r p; do
  case $p in ''|'#'*) continue ;; esac
  patch -d "$src" -p1 --quiet < "$src/debian/patches/$p"
done < "$src/debian/patches/series"

# As debian/rules configures the shared build, with clang and -fsanitize=thread.
echo "tsan_abseil.sh: building abseil with ThreadSanitizer (a few minutes)" >&2
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_STANDARD=17 \
  -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=OFF -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_C_FLAGS="-fsanitize=thread" -DCMAKE_CXX_FLAGS="-fsanitize=thread" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" -DCMAKE_INSTALL_PREFIX="$out" >&2
ninja -C "$work/build" -j "${SLUICE_JOBS:-2}" install >&2
# The same sonames as the system's, so the loader takes these in their place.
want=$(objdump -p /usr/lib/x86_64-linux-gnu/libabsl_synchronization.so | awk '/SONAME/ {print $2}')
got=$(objdump -p "$out"/lib/libabsl_synchronization.so | awk '/SONAME/ {print $2}')
[ "$want" = "$got" ] || { echo "tsan_abseil.sh: soname $got, the system's is $want" >&2; exit 1; }
touch "$out/.done"
echo "$out/lib"
