#!/bin/sh
# libtracemerge.so exports the documented API and nothing else: the
# functions the headers of include/tracemerge/ mark TM_API (tracemerge.h,
# record.h) are exactly the symbols `nm -D --defined-only` lists.
#
# usage: test_library_exports.sh SOURCE_ROOT LIBRARY
set -eu

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

[ $# -eq 2 ] || fail "usage: $0 SOURCE_ROOT LIBRARY"
headers=$1/include/tracemerge
library=$2
command -v nm >/dev/null 2>&1 || fail "nm is needed"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tm-exports-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# The documented API: the name before the first '(' of every declaration
# that starts with TM_API, over the lines it spans (preprocessor lines and
# comments removed first).
grep -hv '^[[:space:]]*#' "$headers"/*.h | tr '\n' ' ' |
  sed 's:/\*\([^*]\|\*\**[^*/]\)*\**\*/::g' | tr ';' '\n' |
  sed -n 's/^.*TM_API \([^(]*\)(.*$/\1/p' |
  awk '{print $NF}' | tr -d '*' | sort -u >"$tmp/documented"
[ -s "$tmp/documented" ] || fail "no TM_API declaration found in $headers"

# A function declared at the top level of a public header without TM_API
# would be part of the API but not exported.
unmarked=$(grep -n '^[a-zA-Z][a-zA-Z_0-9 *]*[ *][a-z_][a-z_0-9]*(' "$headers"/*.h |
  grep -v ':static\|:TM_API\|:typedef\|:extern' || true)
[ -z "$unmarked" ] || fail "public functions declared without TM_API:
$unmarked"

# Defined dynamic symbols of code or data (not the ELF bookkeeping ones
# the toolchain adds, which start with '_').
nm -D --defined-only "$library" | awk '$2 ~ /^[TDRBVWiu]$/ {print $3}' |
  sed 's/@.*$//' | grep -v '^_' | sort -u >"$tmp/exported"

if ! cmp -s "$tmp/documented" "$tmp/exported"; then
  echo "documented (TM_API in $headers) vs exported (nm -D):" >&2
  diff "$tmp/documented" "$tmp/exported" >&2 || true
  fail "libtracemerge.so exports other symbols than its documented API"
fi
echo "ok: $(wc -l <"$tmp/documented") symbols, each documented and exported"
