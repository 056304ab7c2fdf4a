#!/usr/bin/env bash
# Installs every build and test dependency of stormark from Debian 12's packages.
# Idempotent: it does nothing (and needs no network) when everything is already installed.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  # The given stack: gRPC, Protocol Buffers, Asio, OpenSSL, GoogleTest.
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libasio-dev libssl-dev libgtest-dev libgmock-dev
  # Well-kept libraries instead of hand-written parsers.
  libyaml-cpp-dev    # plan files and agent configs
  libcli11-dev       # command-line parsing
  nlohmann-json3-dev # JSON output
  libfmt-dev         # formatting of tables and messages
  liburing-dev       # the io_uring engine of block devices
  libsqlite3-dev     # the results store
  libiscsi-dev       # the user-space iSCSI initiator of iscsi:// targets
  libnbd-dev         # the user-space NBD client of nbd:// targets
  libcurl4-openssl-dev # pushing metrics to a Prometheus Pushgateway
  # Tests: the reference tools stormark's figures are checked against.
  python3 procps bonnie++ postmark fio
  # Tests that use loop devices (losetup) and build real filesystems on them (sweep hooks).
  util-linux mount e2fsprogs
  # Tests of the user-space AoE initiator: an AoE target (vblade) behind a veth pair, and
  # frame loss on that veth (an nftables netdev rule; tc netem is not available everywhere).
  iproute2 nftables vblade
  # Tests and benchmarks of network block targets: real NBD and iSCSI servers, their clients,
  # and the tools that make TLS certificates and PSK files for nbdkit.
  gnutls-bin libiscsi-bin libnbd-bin nbdkit tgt
  # Tests that render the HTML report in a headless browser.
  chromium
  # Fuzzing: clang with libFuzzer and AddressSanitizer (scripts/fuzz.sh, CTest fuzz.smoke).
  clang libclang-rt-14-dev
  # Checks of deploy/: its YAML parses, the playbook passes --syntax-check, the unit verifies.
  ansible-core python3-yaml systemd
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "stormark: installing ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
  sudo=sudo
else
  sudo=
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
