#!/usr/bin/env bash
# Installs, builds, packs the bundled example into a ZIP and shows the merged
# timeline: a client trace from a phone and a server trace from a backend
# whose clock runs 100 µs behind, related by the perfetto_manifest.json
# packed beside them. Ends by exporting the merge as one Perfetto trace and
# one Chrome JSON trace to look at (tests/test_e2e_example.c runs the same
# exports).
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
build/tools/tracemerge export build/example.zip -o build/merged.pftrace
build/tools/tracemerge export build/example.zip -o build/merged.json
cat <<'EOF'

Wrote the merged timeline of both machines as:
  build/merged.pftrace  open it at https://ui.perfetto.dev ("Open trace file";
                        the file stays on your machine): a track group per machine
  build/merged.json     open it in the same UI, in chrome://tracing ("Load";
                        where the browser still has it: docs/exports.md,
                        "Viewers") or in speedscope; process names start
                        with their machine ("phone: client")
EOF
