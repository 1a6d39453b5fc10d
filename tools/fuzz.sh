#!/usr/bin/env bash
# Runs one libFuzzer target of tests/fuzz (docs/fuzzing.md).
#
#   tools/fuzz.sh TARGET SECONDS    fuzz TARGET for SECONDS of CPU, niced, seeded
#                                   from tests/fuzz/corpus/TARGET and the
#                                   target's files in tests/data
#   tools/fuzz.sh --minimize TARGET merge what the runs found into
#                                   tests/fuzz/corpus/TARGET, minimized
#   tools/fuzz.sh --replay TARGET   run the saved corpus and crash inputs
#                                   through the clang build once (UBSan
#                                   checks gcc's lacks, e.g. NULL + 0)
#   tools/fuzz.sh --list            the targets
#
# TARGET: json proto systrace gecko instruments manifest container config
# sql. The build is build-fuzz/ (CC=clang, -Dfuzz=true, ASan + UBSan),
# set up on first use; FUZZ_BUILD names another. A run's new inputs go to
# build-fuzz/fuzz-work/TARGET, its crash inputs to
# build-fuzz/fuzz-artifacts/TARGET/ (copy a fixed one to
# tests/fuzz/crashes/TARGET/ so CI replays it), its log to
# build-fuzz/fuzz-logs/. The last line printed is the run's figures:
# "TARGET: cpu Ns, runs N, exec/s N, cov N, ft N, corpus N, findings N"
# (exec/s is per second of wall-clock time, as libFuzzer counts it).
# FUZZ_NICE sets the niceness of the run and its build (default 10).
set -euo pipefail
root=${FUZZ_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
build=${FUZZ_BUILD:-$root/build-fuzz}
# Niceness of the fuzzer and its build (FUZZ_NICE): 10 leaves the shared
# machine to interactive work without starving the run; 19 yields even more.
niceness=${FUZZ_NICE:-10}
# Undefined behaviour is a finding (an artifact and a non-zero exit), as a
# memory error is; by default UBSan would print it and carry on.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}
targets="json proto systrace gecko instruments manifest container config sql"

usage() {
  sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}

setup() {
  if [ ! -f "$build/build.ninja" ]; then
    command -v clang >/dev/null || { echo "fuzz.sh: clang missing: bash tools/install-fuzz-deps.sh"; exit 1; }
    CC=clang meson setup "$build" "$root" -Dfuzz=true -Db_sanitize=address,undefined \
      -Db_lundef=false --buildtype=debugoptimized >/dev/null
  fi
  nice -n "$niceness" ninja -C "$build" -j2 "tests/fuzz/fuzz_$1" "tests/data/proto/fixtures" >/dev/null 2>&1 ||
    nice -n "$niceness" ninja -C "$build" -j2 "tests/fuzz/fuzz_$1" >/dev/null
}

# The seed files of a target, beside its saved corpus.
seeds() {
  local d=$root/tests/data
  case "$1" in
    json) ls "$d"/json/*.json "$d"/example/*.json "$d"/real/json/*.json ;;
    proto) ls "$build"/tests/data/proto/*.pb "$d"/real/proto/* 2>/dev/null || true ;;
    systrace) ls "$d"/real/systrace/* ;;
    gecko) ls "$d"/real/gecko/*.json ;;
    instruments) ls "$d"/instruments/*.xml "$d"/real/instruments/*.xml ;;
    manifest) ls "$d"/manifest/*.json "$d"/example/perfetto_manifest.json ;;
    container) ls "$d"/real/json/*.gz "$d"/real/gecko/*.gz ;;
    config) ls "$d"/config/*.textproto ;;
    sql) ls "$d"/example/*.sql ;;
  esac
}

[ $# -ge 1 ] || usage
case "$1" in
  --list) echo "$targets"; exit 0 ;;
  --replay)
    [ $# -eq 2 ] || usage
    target=$2
    setup "$target"
    mkdir -p "$root/tests/fuzz/crashes/$target"
    # -runs=0: each input once, no mutation; a finding exits non-zero. The
    # first directory (where libFuzzer would add inputs) is a scratch one.
    scratch=$(mktemp -d)
    set +e
    nice -n "$niceness" "$build/tests/fuzz/fuzz_$target" -runs=0 -timeout=10 \
      -rss_limit_mb=2048 "$scratch" "$root/tests/fuzz/corpus/$target" \
      "$root/tests/fuzz/crashes/$target" 2>&1 |
      grep -E '^(INFO: +[0-9]+ files found|#[0-9]+[[:space:]]+(INITED|DONE))|ERROR|SUMMARY'
    status=${PIPESTATUS[0]}
    set -e
    rm -rf "$scratch"
    echo "$target: replay exit $status"
    exit "$status" ;;
  --minimize)
    [ $# -eq 2 ] || usage
    target=$2
    setup "$target"
    saved=$root/tests/fuzz/corpus/$target
    merged=$(mktemp -d)
    mkdir -p "$saved" "$build/fuzz-work/$target"
    # The saved corpus is replayed by CI and lives in git, so it is kept
    # small (about 600 KiB for all targets): inputs are cut to 2 KiB, and
    # only edges count (-use_counters=0), not how often each was hit,
    # which needs several times the inputs for a few more features. The
    # full corpus stays in build-fuzz/fuzz-work for the next runs.
    nice -n "$niceness" "$build/tests/fuzz/fuzz_$target" -merge=1 -max_len=2048 \
      -use_counters=0 \
      -timeout=10 -rss_limit_mb=2048 "$merged" "$saved" "$build/fuzz-work/$target" \
      >"$build/fuzz-merge-$target.log" 2>&1
    rm -f "$saved"/*
    cp "$merged"/* "$saved"/ 2>/dev/null || true
    rm -rf "$merged"
    echo "$target: $(ls "$saved" | wc -l) inputs, $(du -sk "$saved" | cut -f1) KiB in tests/fuzz/corpus/$target"
    exit 0 ;;
esac
[ $# -eq 2 ] || usage
target=$1
seconds=$2
case " $targets " in *" $target "*) ;; *) echo "fuzz.sh: unknown target $target"; usage ;; esac
setup "$target"
work=$build/fuzz-work/$target
artifacts=$build/fuzz-artifacts/$target
logs=$build/fuzz-logs
seeddir=$build/fuzz-seeds/$target
mkdir -p "$work" "$artifacts" "$logs" "$seeddir" "$root/tests/fuzz/corpus/$target"
for f in $(seeds "$target"); do cp -f "$f" "$seeddir"/; done
log=$logs/$target-$(date +%Y%m%d-%H%M%S).log
dict=()
[ -f "$root/tests/fuzz/$target.dict" ] && dict=(-dict="$root/tests/fuzz/$target.dict")
# SECONDS is CPU time: on a shared machine a niced run gets a fraction of
# a core, so the fuzzer is stopped once its own user + system time
# reaches it. SIGUSR1, not SIGINT: libFuzzer then finishes the unit it is
# running and exits from its loop with its final stats, where its SIGINT
# handler prints them and exits from inside the signal, which can hang
# for good if the signal came while the target held the allocator's lock
# (a fuzz_sql run did: "run interrupted; exiting", then no exit until
# SIGKILL, and no figures line). If it has still not exited a minute
# later, it is killed, and the figures line says so.
nice -n "$niceness" "$build/tests/fuzz/fuzz_$target" -timeout=10 \
  -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
  -artifact_prefix="$artifacts/" \
  "${dict[@]}" \
  "$work" "$root/tests/fuzz/corpus/$target" "$seeddir" \
  $(ls -d "$root/tests/fuzz/crashes/$target" 2>/dev/null) >"$log" 2>&1 &
pid=$!
ticks=$(getconf CLK_TCK)
cpu=0
while kill -0 "$pid" 2>/dev/null; do
  # Fields 14 and 15 of /proc/PID/stat: user and system time in ticks.
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || break
  set -- ${stat##*) }
  cpu=$(( (${12} + ${13}) / ticks ))
  if [ "$cpu" -ge "$seconds" ]; then
    kill -USR1 "$pid" 2>/dev/null || true
    break
  fi
  sleep 5
done
stop=""
for _ in $(seq 60); do
  kill -0 "$pid" 2>/dev/null || break
  sleep 1
done
if kill -0 "$pid" 2>/dev/null; then
  kill -KILL "$pid" 2>/dev/null || true
  stop=", killed: no exit 60 s after SIGUSR1"
fi
set +e
wait "$pid"
status=$?
set -e
# The last stats block (a fuzzer stopped twice printed two).
runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || echo 0)
speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || echo 0)
last=$(grep -E '^#[0-9]+' "$log" | grep -E 'cov: ' | tail -1)
cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*' || echo 0)
ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*' || echo 0)
corpus=$(ls "$work" | wc -l)
findings=$(ls "$artifacts" | wc -l)
figures="$target: cpu ${cpu}s, runs $runs, exec/s $speed, cov $cov, ft $ft, corpus $corpus, findings $findings (exit $status$stop)"
# The figures go to the log too: the CPU time is measured here, not by
# libFuzzer, and the log is what proves how long a target ran.
echo "tools/fuzz.sh: $figures" >>"$log"
echo "log: $log"
echo "$figures"
