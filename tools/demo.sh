#!/usr/bin/env bash
# Installs, builds, packs the bundled example into a ZIP and shows the merged
# timeline: a client trace from a phone and a server trace from a backend
# whose clock runs 100 µs behind, related by the perfetto_manifest.json
# packed beside them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null
rm -f build/example.zip
(cd tests/data/example &&
  zip -q ../../../build/example.zip perfetto_manifest.json client.json server.json)
build/tools/tracemerge info build/example.zip
build/tools/tracemerge query build/example.zip -q tests/data/example/timeline.sql
