#!/bin/sh
# The clickhouse test skips (exit 77) saying why only when there is no
# clickhouse-server binary; a server binary that does not come up is a
# failure, not a skip.
#
# usage: test_clickhouse_skip.sh TEST_CLICKHOUSE
set -u
if [ $# -ne 1 ]; then
  echo "usage: $0 TEST_CLICKHOUSE" >&2
  exit 2
fi
prog=$1

out=$(TRACEMERGE_CLICKHOUSE_SERVER=/nonexistent/clickhouse-server "$prog" 2>&1)
status=$?
if [ "$status" -ne 77 ]; then
  echo "no server binary: exit $status, expected 77 (SKIP):"
  echo "$out"
  exit 1
fi
case $out in
  *"SKIP: clickhouse-server not found"*) ;;
  *) echo "no server binary: the skip does not say why:"; echo "$out"; exit 1 ;;
esac

# A "server" that exits at once.
out=$(TRACEMERGE_CLICKHOUSE_SERVER=/bin/false "$prog" 2>&1)
status=$?
if [ "$status" -eq 0 ] || [ "$status" -eq 77 ]; then
  echo "a server that exits at once: exit $status, expected a failure:"
  echo "$out"
  exit 1
fi
case $out in
  *"clickhouse-server exited with status"*) ;;
  *) echo "a server that exits at once: the failure does not say so:"; echo "$out"; exit 1 ;;
esac
echo "ok: skipped without a server binary, failed with a broken one"
