#!/bin/sh
# A throw-away ClickHouse server for tests and benchmarks:
#
#   tests/clickhouse_server.sh DIR HTTP_PORT TCP_PORT
#
# writes DIR/config.xml and DIR/users.xml (data, logs and temporary files
# under DIR, listening on 127.0.0.1 only, one passwordless user `default`
# allowed from 127.0.0.1) and becomes the server (exec), so its pid is the
# script's: stop it with SIGTERM, remove DIR afterwards. The server is
# $TRACEMERGE_CLICKHOUSE_SERVER, else clickhouse-server from PATH or
# /usr/sbin (Debian's clickhouse-server package; tools/install-deps.sh).
# TRACEMERGE_CLICKHOUSE_LOG_QUERIES=1: every query goes to system.query_log
# (tools/bench_clickhouse.sh reads the INSERTs' CPU time there).
# Exits 77 if there is none.
set -eu
if [ $# -ne 3 ]; then
  echo "usage: $0 DIR HTTP_PORT TCP_PORT" >&2
  exit 2
fi
dir=$1 http_port=$2 tcp_port=$3
server=${TRACEMERGE_CLICKHOUSE_SERVER:-}
if [ -z "$server" ]; then
  server=$(command -v clickhouse-server 2>/dev/null || true)
  [ -n "$server" ] || [ ! -x /usr/sbin/clickhouse-server ] || server=/usr/sbin/clickhouse-server
fi
if [ -z "$server" ] || [ ! -x "$server" ]; then
  echo "clickhouse-server not found (install it with tools/install-deps.sh, or set TRACEMERGE_CLICKHOUSE_SERVER)" >&2
  exit 77
fi
mkdir -p "$dir/data" "$dir/tmp"
dir=$(cd "$dir" && pwd)
cat >"$dir/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <logger>
    <level>warning</level>
    <log>$dir/server.log</log>
    <errorlog>$dir/server.err.log</errorlog>
    <console>0</console>
  </logger>
  <http_port>$http_port</http_port>
  <tcp_port>$tcp_port</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$dir/data/</path>
  <tmp_path>$dir/tmp/</tmp_path>
  <users_config>$dir/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
</yandex>
EOF
cat >"$dir/users.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <profiles>
    <default>
      <max_threads>2</max_threads>
      <background_pool_size>2</background_pool_size>
      <log_queries>${TRACEMERGE_CLICKHOUSE_LOG_QUERIES:-0}</log_queries>
    </default>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas><default></default></quotas>
</yandex>
EOF
exec "$server" --config-file="$dir/config.xml"
