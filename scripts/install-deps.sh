#!/usr/bin/env bash
# Installs what stormark needs from Debian 12's packages, one set at a time:
#
#   scripts/install-deps.sh build   the compiler, CMake and the libraries the two programs link
#                                   against, and what `make deb` uses (dpkg-dev, help2man)
#   scripts/install-deps.sh run     build, and what running the programs needs besides their
#                                   libraries (nothing else today): what `make run` installs
#   scripts/install-deps.sh test    run, and the test tools: reference benchmarks, target
#                                   daemons, a headless browser, clang for fuzzing,
#                                   clang-format, ansible, debootstrap and lintian: what
#                                   `make test` installs
#
# Idempotent: it does nothing (and needs no network) when the set is already installed.
# It never leaves a service it installed enabled or running: while apt runs, a policy-rc.d
# refuses every start (unless the host already has one), and the daemons the tests start by
# themselves (tgt, vblade, fio's server, nftables) are stopped and disabled afterwards when
# this script is what brought them in. A daemon that was already installed is left as it was.
set -euo pipefail

usage() {
  echo "usage: $0 build|run|test" >&2
  exit 2
}
[ $# -eq 1 ] || usage
set_name=$1

build_packages=(
  build-essential cmake pkg-config
  # The given stack: gRPC, Protocol Buffers, OpenSSL, GoogleTest (the unit tests are part of
  # the default build; `make run` configures without them).
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libssl-dev
  # Well-kept libraries instead of hand-written parsers.
  libyaml-cpp-dev    # plan files and agent configs
  libcli11-dev       # command-line parsing
  nlohmann-json3-dev # JSON output
  libfmt-dev         # formatting of tables and messages
  liburing-dev       # the io_uring engine of block devices
  libaio-dev         # the libaio engine (Linux native AIO), as fio's
  libsqlite3-dev     # the results store
  libiscsi-dev       # the user-space iSCSI initiator of iscsi:// targets
  libnbd-dev         # the user-space NBD client of nbd:// targets
  libcurl4-openssl-dev # pushing metrics to a Pushgateway
  # `make deb`: dpkg-shlibdeps computes the packages' dependencies; help2man writes the man
  # pages from --help.
  dpkg-dev help2man
)

# Running needs only the libraries above (they come with their -dev packages).
run_packages=()

test_packages=(
  libgtest-dev libgmock-dev
  # The reference tools stormark's figures are checked against.
  python3 procps bonnie++ postmark fio
  # fio's fio_jsonplus_clat2csv, which reads --fio-json-plus output, imports six; the fio
  # package does not depend on it.
  python3-six
  # Tests that use loop devices (losetup) and build real filesystems on them (sweep hooks).
  util-linux mount e2fsprogs
  # Tests of the user-space AoE initiator: an AoE target (vblade) behind a veth pair, and
  # frame loss on that veth (an nftables netdev rule; tc netem is not available everywhere).
  iproute2 nftables vblade
  # Clock tests: libfaketime steps one agent's clock mid-run (tests/integration/validity_test.py).
  faketime
  # Tests and benchmarks of network block targets: real NBD and iSCSI servers, their clients,
  # and the tools that make TLS certificates and PSK files for nbdkit.
  gnutls-bin libiscsi-bin libnbd-bin nbdkit tgt
  # Tests that render the HTML report in a headless browser.
  chromium
  # Fuzzing: clang with libFuzzer and AddressSanitizer (scripts/fuzz.sh, CTest fuzz.smoke).
  clang libclang-rt-14-dev
  # The layout check of the C++ sources (scripts/format.sh, CTest format.check).
  clang-format
  # Checks of deploy/: its YAML parses, the playbook passes --syntax-check, the unit verifies.
  ansible-core python3-yaml systemd
  # The package test: lintian on the .debs, and a clean Debian root to install them into.
  lintian debootstrap
  # The lab of real kernels (tests/vm): qemu guests booting Debian's own kernel, with a
  # busybox initramfs that tests/vm/vmlab.py builds.
  qemu-system-x86 busybox-static linux-image-amd64
  # What lab guests run from the host's root: the kernel's NBD client, open-iscsi's iscsid and
  # iscsiadm, mdadm for md RAID, and the filesystems the seeds' scenarios make (JFS, XFS).
  nbd-client open-iscsi mdadm jfsutils xfsprogs
)

# Daemons that tests start by themselves, on their own ports and in their own directories.
# Debian enables (and would start) their services on installation.
daemon_packages=(tgt vblade fio nftables open-iscsi mdadm)

case "$set_name" in
  build) packages=("${build_packages[@]}") ;;
  run) packages=("${build_packages[@]}" "${run_packages[@]}") ;;
  test) packages=("${build_packages[@]}" "${run_packages[@]}" "${test_packages[@]}") ;;
  *) usage ;;
esac

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  sudo=sudo
else
  sudo=
fi

# The daemons this run brings in: only those are stopped and disabled afterwards.
new_daemons=()
for p in "${daemon_packages[@]}"; do
  for m in "${missing[@]}"; do
    [ "$p" = "$m" ] && new_daemons+=("$p")
  done
done

policy=/usr/sbin/policy-rc.d
own_policy=
if [ ! -e "$policy" ]; then
  # 101: "action forbidden by policy"; invoke-rc.d and deb-systemd-invoke start nothing.
  printf '#!/bin/sh\n# Written by stormark scripts/install-deps.sh while it runs apt.\nexit 101\n' |
    $sudo tee "$policy" >/dev/null
  $sudo chmod 0755 "$policy"
  own_policy=1
fi
cleanup() {
  if [ -n "$own_policy" ]; then $sudo rm -f "$policy"; fi
}
trap cleanup EXIT

echo "stormark: installing ($set_name) ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"

# Whatever the policy kept from starting is also not to start at boot.
for p in ${new_daemons[@]+"${new_daemons[@]}"}; do
  while read -r path; do
    case "$path" in
      /lib/systemd/system/*.service | /lib/systemd/system/*.socket | /usr/lib/systemd/system/*.service)
        unit=$(basename "$path")
        case "$unit" in *@.service) continue ;; esac
        if [ -d /run/systemd/system ]; then
          $sudo systemctl stop "$unit" 2>/dev/null || true
        fi
        $sudo systemctl disable "$unit" >/dev/null 2>&1 || true
        ;;
      /etc/init.d/*)
        $sudo update-rc.d "$(basename "$path")" disable >/dev/null 2>&1 || true
        ;;
    esac
  done < <(dpkg-query -L "$p")
  echo "stormark: $p is installed with its service stopped and disabled" >&2
done
