#!/usr/bin/env bash
# Installs, builds, packs the bundled example (a client and a server trace)
# into a ZIP and shows the merged timeline.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null
rm -f build/example.zip
(cd tests/data/example && zip -q ../../../build/example.zip client.json server.json)
build/tools/tracemerge info build/example.zip
build/tools/tracemerge query build/example.zip --sql \
  "SELECT s.ts, s.dur, s.depth, s.name, t.name AS thread, p.name AS process
     FROM slice s JOIN thread_track tt ON s.track_id = tt.id
     JOIN thread t USING (utid) LEFT JOIN process p USING (upid)
    ORDER BY s.ts"
