#!/bin/sh
# The ClickHouse sink's figure in one command (docs/clickhouse.md, "How
# fast a load is"):
#
#   tools/bench_clickhouse.sh BUILD_DIR [ROUNDS [EVENTS]]
#
# BUILD_DIR: a release build (meson setup build-rel --buildtype=release &&
# ninja -C build-rel). Starts a throw-away server (tests/clickhouse_server.sh,
# data in /dev/shm when there is one, stopped and removed at the end), then
# per round (ROUNDS, default 3, medians printed at the end):
#
#  1. tools/bench --to-clickhouse on the bench's generated Chrome JSON trace
#     (EVENTS events, default 2 000 000, seed 1, realistic shape, made once):
#     the SQLite save and the ClickHouse load of the same import, each
#     timed alone after it (rows/s of each), and the bench's own CPU in the
#     load ("client");
#  2. the server's CPU for that load: user + system of the server process
#     from /proc, around the bench, once the merges the load started are
#     done (the server does nothing else; the bench's import stages before
#     the load do not touch it);
#  3. the floor: the same rows posted by plain `curl` processes, nothing of
#     tracemerge in them. Each table's rows are read back from the server
#     as Native in the sink's block size (untimed), then posted into fresh
#     tables of the same structure, four tables at a time as the sink
#     does, with the sink's min_insert_block_size_rows: in id order and in
#     blocks of the sink's size, so the same bytes as the load sent (a
#     single run). Wall time and server CPU as above.
#
# Prints per round: rows, rows/s (ClickHouse, SQLite, curl), client and
# server microseconds of CPU per row, the load's wall time over the curl
# floor's, and the load average; then the medians. Wall figures depend on
# what else the machine runs (the load average is printed for that); CPU
# per row much less.
set -eu
if [ $# -lt 1 ]; then
  echo "usage: $0 BUILD_DIR [ROUNDS [EVENTS]]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
rounds=${2:-3}
events=${3:-2000000}
src=$(cd "$(dirname "$0")/.." && pwd)
bench=$build/tools/bench
[ -x "$bench" ] && [ -x "$build/tools/gen_chrome_json" ] ||
  { echo "$build: tools/bench and tools/gen_chrome_json not built" >&2; exit 2; }
# The JSON reader of this build, wherever the build directory now is.
TRACEMERGE_PLUGIN_PATH=$build/plugins/json
export TRACEMERGE_PLUGIN_PATH
command -v curl >/dev/null || { echo "curl not found" >&2; exit 2; }
base=/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && base=/dev/shm
dir=$(mktemp -d "$base/tm-bench-ch.XXXXXX")
http_port=$((20000 + $$ % 20000))
tcp_port=$((http_port + 1))
url=http://127.0.0.1:$http_port/
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
# A signal (Ctrl-C, or a closed pipe: `... | head`) still stops the server.
trap 'exit 1' HUP INT PIPE TERM

TRACEMERGE_CLICKHOUSE_LOG_QUERIES=1 \
  "$src/tests/clickhouse_server.sh" "$dir/server" "$http_port" "$tcp_port" \
  >"$dir/server.out" 2>&1 &
server_pid=$!

# q SQL [QUERY_STRING]: one statement, its answer on stdout. The setting
# lets the 18.16 server create the LowCardinality columns (docs/clickhouse.md).
q() {
  curl -sS --fail-with-body \
    "$url?allow_experimental_low_cardinality_type=1&${2:-}" --data-binary "$1"
}
i=0
until q "SELECT 1" >/dev/null 2>&1; do
  i=$((i + 1))
  if [ $i -gt 120 ] || ! kill -0 "$server_pid" 2>/dev/null; then
    echo "the server did not start:" >&2
    cat "$dir/server.out" "$dir/server/server.err.log" >&2 2>/dev/null || true
    exit 1
  fi
  sleep 0.5
done

# The server's user + system CPU so far, in clock ticks.
ticks() { awk '{ print $14 + $15 }' "/proc/$server_pid/stat"; }
hz=$(getconf CLK_TCK)
wait_merges() {
  until [ "$(q 'SELECT count() FROM system.merges')" = "0" ]; do sleep 0.2; done
}
now() { date +%s.%N; }

# The bench's input, made once: what `bench --events EVENTS` generates.
mkdir -p "$dir/work"
input=$dir/work/bench.json
"$build/tools/gen_chrome_json" --realistic --events "$events" --seed 1 \
  --output "$input"

tables="slice counter sched thread_state flow args thread process track cpu
trace_file stats metadata machine"

printf '%-5s %9s %9s %11s %11s %11s %9s %9s %9s %9s %s\n' round rows "load s" \
  "ch rows/s" "sqlite r/s" "curl r/s" "client us" "server us" "curl srv" \
  "load/curl" "load average"
: >"$dir/rounds"
r=1
while [ "$r" -le "$rounds" ]; do
  q "DROP DATABASE IF EXISTS bench"
  wait_merges
  t0=$(ticks)
  s_load=$(date +%s)
  "$bench" --input "$input" --workdir "$dir/work" \
    --to-clickhouse "clickhouse://127.0.0.1:$http_port/bench" \
    >"$dir/bench.out" 2>&1 || { cat "$dir/bench.out" >&2; exit 1; }
  wait_merges
  t1=$(ticks)
  # "clickhouse  ROWS  WALL  ROWS/S  CPU" and "sqlite save ..." (tools/bench.c)
  set -- $(awk '$1 == "clickhouse" { print $2, $3, $4, $5 }' "$dir/bench.out")
  rows=$1 load_s=$2 ch_rate=$3 client_s=$4
  sqlite_rate=$(awk '$1 == "sqlite" && $2 == "save" { print $5 }' "$dir/bench.out")

  # The floor: the same rows, posted by curl.
  posts=
  for t in $tables; do
    n=$(q "SELECT count() FROM bench.$t")
    [ "$n" -gt 0 ] || continue
    # The sink's block size (clickhouse_sink.c: block_rows_for()).
    b=$(( (n + 63) / 64 ))
    [ $b -lt 262144 ] && b=262144
    [ $b -gt 1048576 ] && b=1048576
    # In id order, as the sink sends them: sorted, the server answers in
    # blocks of exactly max_block_size rows (the last one fewer).
    q "SELECT * FROM bench.$t ORDER BY id FORMAT Native" "max_block_size=$b" \
      >"$dir/$t.native"
    q "CREATE TABLE bench.floor_$t AS bench.$t"
    posts="$posts $t:$b"
  done
  wait_merges
  f0=$(ticks)
  s0=$(now)
  echo $posts | tr ' ' '\n' | xargs -P 4 -I{} sh -c '
    t=${1%%:*} b=${1#*:}
    curl -sS --fail-with-body -X POST -T "$2/$t.native" \
      "$3?min_insert_block_size_rows=$b&query=INSERT%20INTO%20bench.floor_$t%20FORMAT%20Native" >/dev/null
  ' sh {} "$dir" "$url"
  s1=$(now)
  wait_merges
  f1=$(ticks)
  rm -f "$dir"/*.native
  # The server's CPU in each INSERT of the load, per table.
  q "SYSTEM FLUSH LOGS"
  q "SELECT extract(query, '_tm_stage_[0-9a-f]+_([a-z_]+)') AS t,
       sum(written_rows),
       sum(ProfileEvents.Values[indexOf(ProfileEvents.Names, 'UserTimeMicroseconds')]
         + ProfileEvents.Values[indexOf(ProfileEvents.Names, 'SystemTimeMicroseconds')])
     FROM system.query_log
     WHERE type = 2 AND query LIKE 'INSERT INTO \`bench\`.\`_tm_stage_%FORMAT Native%'
       AND event_time >= toDateTime($(printf %.0f "$s_load"))
     GROUP BY t FORMAT TSV" >"$dir/tables.$r"
  floor_rows=$(q "SELECT $(for t in $tables; do printf '(SELECT count() FROM bench.floor_%s) + ' $t; done) 0" 2>/dev/null || echo 0)
  [ "$floor_rows" = "$rows" ] || {
    echo "round $r: curl posted $floor_rows rows, the load $rows" >&2; exit 1; }
  awk -v r="$r" -v rows="$rows" -v load_s="$load_s" -v ch="$ch_rate" \
    -v sq="${sqlite_rate:-0}" -v client_s="$client_s" -v t0="$t0" -v t1="$t1" \
    -v f0="$f0" -v f1="$f1" -v s0="$s0" -v s1="$s1" -v hz="$hz" \
    -v la="$(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN {
      curl_s = s1 - s0
      printf "%-5s %9d %9.2f %11.0f %11.0f %11.0f %9.3f %9.3f %9.3f %9.2f %s\n",
        r, rows, load_s, ch, sq, rows / curl_s, client_s * 1e6 / rows,
        (t1 - t0) / hz * 1e6 / rows, (f1 - f0) / hz * 1e6 / rows,
        load_s / curl_s, la
    }' | tee -a "$dir/rounds"
  r=$((r + 1))
done
# Medians of each numeric column.
awk '{ for (c = 2; c <= 10; c++) v[c, NR] = $c }
  END {
    printf "%-5s", "med"
    for (c = 2; c <= 10; c++) {
      n = 0
      for (i = 1; i <= NR; i++) a[++n] = v[c, i]
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
        if (a[j] + 0 < a[i] + 0) { x = a[i]; a[i] = a[j]; a[j] = x }
      m = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
      printf(c == 2 ? " %9d" : c == 3 ? " %9.2f" : c <= 6 ? " %11.0f" : c <= 9 ? " %9.3f" : " %9.2f", m)
    }
    printf "\n"
  }' "$dir/rounds"
echo "(rows/s: rows of the fourteen tables over the sink's wall time, the SQLite save's
and the curl posts' over theirs; client us: the bench's CPU microseconds per row in
the load; server us / curl srv: the server's, per row, for the load and for the curl
posts of the same rows, merges included; load/curl: the load's wall time over the
curl posts'; input: $events events, $(basename "$input"))"
echo "server CPU of each table's INSERT (system.query_log; staging tables, publishing
and merges not included), medians of the rounds:"
printf "%-13s %9s %12s\n" table rows "server us/row"
cat "$dir"/tables.* | awk -F'\t' '{ rows[$1] = $2; v[$1] = v[$1] " " $3 / $2 }
  END {
    for (t in rows) {
      n = split(substr(v[t], 2), a, " ")
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
        if (a[j] + 0 < a[i] + 0) { x = a[i]; a[i] = a[j]; a[j] = x }
      m = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
      printf "%-13s %9d %12.3f\n", t, rows[t], m
    }
  }' | sort -k2,2nr
