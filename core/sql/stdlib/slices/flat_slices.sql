-- Flattened thread slices: at any time on a thread track, only the most
-- deeply nested slice that is running. Written for tracemerge from the
-- public documentation of the trace_processor module of the same name.
--
-- How: the boundaries of a track are the starts and ends of its slices
-- (with dur > 0). After a boundary where a slice starts, the deepest slice
-- starting there runs; after one where slices only end, the parent of the
-- shallowest slice ending there does (or nothing, at depth 0). Each
-- boundary opens a piece lasting to the next boundary.

INCLUDE PERFETTO MODULE slices.with_context;

CREATE PERFETTO TABLE _slice_flattened(
  slice_id LONG, ts TIMESTAMP, dur LONG, depth LONG, name STRING,
  root_name STRING, root_id LONG, track_id LONG, utid LONG, tid LONG,
  thread_name STRING, upid LONG, pid LONG, process_name STRING
) AS
WITH
  timed AS (SELECT id, track_id, ts, dur, depth, parent_id
            FROM thread_slice WHERE dur > 0),
  starts AS (SELECT track_id, ts AS t, id AS slice_id, max(depth)
             FROM timed GROUP BY track_id, ts),
  ends AS (SELECT track_id, ts + dur AS t, parent_id AS slice_id, min(depth)
           FROM timed GROUP BY track_id, ts + dur),
  points AS (SELECT track_id, t, slice_id, 1 AS opens FROM starts
             UNION ALL
             SELECT track_id, t, slice_id, 0 AS opens FROM ends),
  chosen AS (SELECT track_id, t, slice_id, max(opens)
             FROM points GROUP BY track_id, t),
  pieces AS (SELECT track_id, t AS ts,
                    lead(t) OVER (PARTITION BY track_id ORDER BY t) - t AS dur,
                    slice_id
             FROM chosen)
SELECT p.slice_id, p.ts, p.dur, s.depth, s.name,
       coalesce(r.name, s.name) AS root_name,
       coalesce(r.id, s.id) AS root_id,
       s.track_id, s.utid, s.tid, s.thread_name, s.upid, s.pid,
       s.process_name
FROM pieces p
JOIN thread_slice s ON s.id = p.slice_id
LEFT JOIN ancestor_slice(p.slice_id) r ON r.depth = 0
WHERE p.dur > 0
ORDER BY p.track_id, p.ts;

-- The name older trace_processor versions used.
CREATE PERFETTO VIEW experimental_slice_flattened AS
SELECT * FROM _slice_flattened;
