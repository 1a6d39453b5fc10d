-- The merged timeline of the bundled example: every slice with its thread,
-- process and machine (tools/demo.sh prints it; tests/test_e2e_example.c
-- checks it).
SELECT s.ts, s.dur, s.depth, s.name, t.name AS thread, p.name AS process,
       m.name AS machine
  FROM slice s JOIN thread_track tt ON s.track_id = tt.id
  JOIN thread t USING (utid) LEFT JOIN process p USING (upid)
  JOIN machine m ON t.machine_id = m.id
 ORDER BY s.ts;
