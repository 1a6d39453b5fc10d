#!/bin/sh
# The example third-party reader builds outside the tree against the
# installed header alone, and the CLI loads it through TRACEMERGE_PLUGIN_PATH.
#
# usage: test_example_plugin_outside.sh SOURCE_ROOT CC [CC_ARGS...]
# env:   TRACEMERGE_CLI  the tracemerge executable to run
#
# "Installed header alone": only include/tracemerge/plugin.h is copied into
# an include directory of its own, laid out as installed
# (<include>/tracemerge/plugin.h); the compiler sees nothing else of the
# tree. The copy in the plugin directory is the one the CLI must load: the
# build tree also holds an in-tree tm-example.so, a reader of the same name,
# so our copy is named in TRACEMERGE_PLUGIN_PREFER (without it the two
# clash and every command fails), and the test checks that the reader
# listed as "example" comes from our directory.
set -eu

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

[ $# -ge 2 ] || fail "usage: $0 SOURCE_ROOT CC [CC_ARGS...]"
src=$1
shift
[ -n "${TRACEMERGE_CLI:-}" ] || fail "TRACEMERGE_CLI is not set"
[ -x "$TRACEMERGE_CLI" ] || fail "TRACEMERGE_CLI=$TRACEMERGE_CLI is not executable"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tm-example-outside-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
tmp=$(cd "$tmp" && pwd -P)

mkdir -p "$tmp/include/tracemerge" "$tmp/plugins"
cp "$src/include/tracemerge/plugin.h" "$tmp/include/tracemerge/plugin.h"
cp "$src/plugins/example/example_reader.c" "$tmp/example_reader.c"

# The build a third party would run: strict C17, the header and nothing else.
"$@" -std=c17 -Wall -Wextra -Wpedantic -Werror -O2 -fPIC -shared \
  -fvisibility=hidden -I"$tmp/include" \
  -o "$tmp/plugins/tm-example.so" "$tmp/example_reader.c" ||
  fail "the example reader does not build against the installed header"

# Its only undefined symbols are libc's: no link-time tie to the host.
if command -v nm >/dev/null 2>&1; then
  undefined=$(nm -D --undefined-only "$tmp/plugins/tm-example.so" |
    awk '{print $NF}' | grep -v -E '^(calloc|free|memcmp|memcpy|strlen|strtoll|__[a-z_]+)(@.*)?$' |
    grep -v -E '^_ITM_|^_Jv_|^__gmon_start__' || true)
  [ -z "$undefined" ] || fail "unexpected undefined symbols: $undefined"
fi

printf '#tm-example\n2500 beta\n# a comment line\n1000 alpha\n7000 gamma delta\n' \
  >"$tmp/trace.example"

export TRACEMERGE_PLUGIN_PATH="$tmp/plugins"
export TRACEMERGE_PLUGIN_PREFER="$tmp/plugins/tm-example.so"

"$TRACEMERGE_CLI" plugins >"$tmp/plugins.out" 2>"$tmp/plugins.err" ||
  fail "'tracemerge plugins' failed: $(cat "$tmp/plugins.err")"
# The reader named "example" must be listed with the path of our copy
# (names are unique in the set, so then the in-tree copy is not loaded).
grep -F "$tmp/plugins/tm-example.so" "$tmp/plugins.out" |
  sed "s|$tmp/plugins/tm-example.so||" | grep -q -w 'example' ||
  fail "'tracemerge plugins' does not list a reader \"example\" loaded from
$tmp/plugins/tm-example.so:
$(cat "$tmp/plugins.out" "$tmp/plugins.err")"

"$TRACEMERGE_CLI" query "$tmp/trace.example" \
  --sql "select name, ts from slice order by ts" \
  >"$tmp/query.out" 2>"$tmp/query.err" ||
  fail "'tracemerge query' failed: $(cat "$tmp/query.err")"

# CSV as trace_processor prints it; compare without the quoting.
tr -d '"\r' <"$tmp/query.out" >"$tmp/query.txt"
printf 'name,ts\nalpha,1000\nbeta,2500\ngamma delta,7000\n' >"$tmp/expected.txt"
cmp -s "$tmp/query.txt" "$tmp/expected.txt" ||
  fail "unexpected query output:
$(cat "$tmp/query.out")
expected (modulo quotes):
$(cat "$tmp/expected.txt")"

# Its config block: ns per ts unit, handed over by --reader-config as the
# file's bytes; 1000 makes every ts a µs count.
printf '1000' >"$tmp/unit"
"$TRACEMERGE_CLI" query "$tmp/trace.example" --reader-config "example=$tmp/unit" \
  --sql "select name, ts from slice order by ts" \
  >"$tmp/query.out" 2>"$tmp/query.err" ||
  fail "'tracemerge query --reader-config' failed: $(cat "$tmp/query.err")"
tr -d '"\r' <"$tmp/query.out" >"$tmp/query.txt"
printf 'name,ts\nalpha,1000000\nbeta,2500000\ngamma delta,7000000\n' >"$tmp/expected.txt"
cmp -s "$tmp/query.txt" "$tmp/expected.txt" ||
  fail "the example's config did not scale ts:
$(cat "$tmp/query.out")
expected (modulo quotes):
$(cat "$tmp/expected.txt")"

# A config that is no unit fails the file, with a message naming it.
printf 'µs' >"$tmp/bad-unit"
if "$TRACEMERGE_CLI" query "$tmp/trace.example" \
  --reader-config "example=$tmp/bad-unit" --sql "select 1" \
  >"$tmp/query.out" 2>"$tmp/query.err"; then
  fail "a bad example_config was accepted"
fi
grep -q -F "$tmp/trace.example: example_config is no unit" "$tmp/query.err" ||
  fail "unexpected error for a bad example_config: $(cat "$tmp/query.err")"

echo "ok: example reader built outside the tree and loaded via TRACEMERGE_PLUGIN_PATH"
