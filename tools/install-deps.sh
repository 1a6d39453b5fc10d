#!/usr/bin/env bash
# Installs what tracemerge needs to build and test on Debian 12 (as root, or
# with sudo available). Safe to run again: apt-get skips what is present.
# libcurl4-openssl-dev: the ClickHouse sink's HTTP client (core/sink; its
# headers at build time, libcurl.so.4 dlopened when a sink first posts);
# clickhouse-server: the ClickHouse tests start a throw-away server of their
# own (tests/clickhouse_server.sh); the package's system service, where the
# system starts one, is not used. Nothing needs clickhouse-client: the
# tests and their readiness check talk HTTP through tracemerge's own client.
# libisal-dev: ISA-L's igzip inflates ZIP members (core/input/deflate_stream),
# 2.5x faster than zlib on the bench's mixed ZIP (docs/performance.md).
set -euo pipefail
packages=(
  build-essential meson ninja-build pkg-config
  libglib2.0-dev libyajl-dev libarchive-dev libsqlite3-dev
  libprotobuf-c-dev protobuf-c-compiler protobuf-compiler zlib1g-dev libzstd-dev
  sqlite3 zip libedit-dev
  libiberty-dev libisal-dev
  libcurl4-openssl-dev clickhouse-server
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
