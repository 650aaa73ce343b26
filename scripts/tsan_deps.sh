#!/usr/bin/env bash
# Builds the system libraries that hand data between threads, Debian 12's abseil and gRPC (the
# same versions and Debian patches as the installed libabsl20220623 and libgrpc29), with
# ThreadSanitizer, as shared libraries with the system's sonames, and prints the folder that
# holds them. scripts/sanitize.sh tsan puts that folder first on the tests' LD_LIBRARY_PATH,
# so the tests load the instrumented copies: ThreadSanitizer then sees absl::Mutex and gRPC's
# own synchronization, and does not report every access they order as a race.
#
#   dir=$(scripts/tsan_deps.sh)     # cached under ~/.cache/sluice-deps; safe to run twice
#
# The sources come from Debian's registry (a deb-src entry in a private apt configuration, so
# the machine's own sources stay as they are), checked against the checksums below. The first
# run takes a while: abseil a few minutes, gRPC's core most of an hour on 2 cores.
set -euo pipefail
cache=${SLUICE_DEPS_CACHE:-$HOME/.cache/sluice-deps}
jobs=${SLUICE_JOBS:-2}
out=$cache/tsan-libs
mkdir -p "$cache" "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# fetch_source PACKAGE VERSION DEBIAN_REVISION ORIG_SHA256 DEBIAN_SHA256 DIR: the source
# package's tarballs (cached, checked), unpacked into DIR with Debian's patches applied.
fetch_source() {
  local pkg=$1 version=$2 revision=$3 orig_sha=$4 deb_sha=$5 dir=$6
  local orig=$cache/${pkg}_$version.orig.tar.gz deb=$cache/${pkg}_$version-$revision.debian.tar.xz
  if ! echo "$orig_sha  $orig" | sha256sum -c --quiet >/dev/null 2>&1 ||
     ! echo "$deb_sha  $deb" | sha256sum -c --quiet >/dev/null 2>&1; then
    echo "tsan_deps.sh: fetching $pkg $version-$revision's source from Debian" >&2
    local apt=$work/apt
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
    awk 'BEGIN{RS=""} /Suites: bookworm/ {print; exit}' /etc/apt/sources.list.d/debian.sources |
      sed -E 's/^Types:.*/Types: deb deb-src/' > "$apt/src.sources"
    [ -s "$apt/src.sources" ] || { echo "tsan_deps.sh: no bookworm entry in /etc/apt/sources.list.d/debian.sources" >&2; exit 1; }
    local opts=(-o "Dir::Etc::sourcelist=$apt/src.sources" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$apt/lists"
                -o "Dir::Cache=$apt/cache")
    [ -f "$apt/updated" ] || { apt-get "${opts[@]}" update >&2 && touch "$apt/updated"; }
    (cd "$apt" && apt-get "${opts[@]}" source --download-only "$pkg=$version-$revision" >&2)
    echo "$orig_sha  $apt/${pkg}_$version.orig.tar.gz" | sha256sum -c --quiet
    echo "$deb_sha  $apt/${pkg}_$version-$revision.debian.tar.xz" | sha256sum -c --quiet
    mv "$apt/${pkg}_$version.orig.tar.gz" "$orig"
    mv "$apt/${pkg}_$version-$revision.debian.tar.xz" "$deb"
  fi
  mkdir -p "$dir"
  tar -xzf "$orig" -C "$dir" --strip-components=1
  tar -xJf "$deb" -C "$dir"
  local p
  while read -r p; do
    case $p in ''|'#'*) continue ;; esac
    patch -d "$dir" -p1 --quiet < "$dir/debian/patches/$p"
  done < "$dir/debian/patches/series"
}

# check_installed PACKAGE VERSION: the system's binary package is this version (a binNMU
# suffix such as +b1 aside), so the instrumented build has its ABI.
check_installed() {
  local installed
  installed=$(dpkg-query -W -f '${Version}' "$1" 2>/dev/null || true)
  if [ "${installed%+b[0-9]*}" != "$2" ]; then
    echo "tsan_deps.sh: the system's $1 is '$installed', this script builds $2;" \
         "update the versions and checksums here to match it" >&2
    exit 1
  fi
}

# same_soname LIB: the instrumented LIB has the system's soname, so the loader takes it instead.
same_soname() {
  local want got
  want=$(objdump -p "/usr/lib/x86_64-linux-gnu/$1" | awk '/SONAME/ {print $2}')
  got=$(objdump -p "$out/$1" | awk '/SONAME/ {print $2}')
  [ -n "$want" ] && [ "$want" = "$got" ] || { echo "tsan_deps.sh: $1 has soname '$got', the system's '$want'" >&2; exit 1; }
}

tsan_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON
            -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
            -DCMAKE_C_FLAGS=-fsanitize=thread -DCMAKE_CXX_FLAGS=-fsanitize=thread
            -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread)

if [ ! -f "$out/.abseil-done" ]; then
  check_installed libabsl20220623 20220623.1-1+deb12u2
  fetch_source abseil 20220623.1 1+deb12u2 \
    abfe2897f3a30edaa74bc34365afe3c2a3cd012091a97dc7e008f7016adcd5fe \
    e08490fc7b6f3beca1925953b0c4fb92df2de5e2a01295e4641e2a3d4e528eeb "$work/abseil"
  echo "tsan_deps.sh: building abseil with ThreadSanitizer" >&2
  # As debian/rules configures the shared build.
  cmake -S "$work/abseil" -B "$work/abseil-build" -G Ninja "${tsan_flags[@]}" -DBUILD_TESTING=OFF >&2
  ninja -C "$work/abseil-build" -j "$jobs" >&2
  find "$work/abseil-build" -name 'libabsl_*.so*' -exec cp -P {} "$out/" \;
  same_soname libabsl_synchronization.so
  touch "$out/.abseil-done"
fi

if [ ! -f "$out/.grpc-done" ]; then
  check_installed libgrpc29 1.51.1-3
  fetch_source grpc 1.51.1 3 \
    b55696fb249669744de3e71acc54a9382bea0dce7cd5ba379b356b12b82d4229 \
    767b69da166bae708a54c4740056d9e847d57d89885173016bfc57ebbf154b2d "$work/grpc"
  echo "tsan_deps.sh: building gRPC's libraries with ThreadSanitizer" >&2
  # debian/rules' providers: every dependency from the system (abseil's headers and sonames
  # are the system's; at run time the instrumented copies above are loaded).
  cmake -S "$work/grpc" -B "$work/grpc-build" -G Ninja "${tsan_flags[@]}" -DgRPC_BUILD_TESTS=OFF \
    -DgRPC_ABSL_PROVIDER=package -DgRPC_CARES_PROVIDER=package -DgRPC_PROTOBUF_PROVIDER=package \
    -DgRPC_RE2_PROVIDER=package -DgRPC_SSL_PROVIDER=package -DgRPC_ZLIB_PROVIDER=package \
    -DgRPC_BENCHMARK_PROVIDER=none -DgRPC_BACKWARDS_COMPATIBILITY_MODE=OFF -DgRPC_BUILD_CSHARP_EXT=OFF \
    -DgRPC_BUILD_CODEGEN=OFF -DProtobuf_PROTOC_LIBRARY=/usr/lib/x86_64-linux-gnu/libprotoc.so.32 >&2
  ninja -C "$work/grpc-build" -j "$jobs" grpc grpc++ gpr address_sorting upb >&2
  find "$work/grpc-build" -maxdepth 1 \( -name 'libgrpc*.so*' -o -name 'libgpr.so*' -o -name 'libaddress_sorting.so*' \
    -o -name 'libupb.so*' \) -exec cp -P {} "$out/" \;
  same_soname libgrpc.so
  same_soname libgrpc++.so
  same_soname libgpr.so
  touch "$out/.grpc-done"
fi
echo "$out"
