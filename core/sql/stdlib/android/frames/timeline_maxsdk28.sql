-- Frames of Android apps on Android 9 (SDK 28) and older, whose
-- Choreographer#doFrame and DrawFrame slices carry no vsync id. Written for
-- tracemerge from the public documentation of the trace_processor module
-- of the same name.

INCLUDE PERFETTO MODULE slices.with_context;

-- One row per (doFrame, DrawFrame) pair: a process' DrawFrame slices that
-- start at or after one of its main thread's `Choreographer#doFrame` and
-- before the next one (or the trace end) belong to that doFrame.
-- frame_id numbers the doFrames from 1 in time order (a doFrame with two
-- DrawFrames has one id); dur runs from the doFrame's start to the end of
-- its last DrawFrame; sdk is 'maxsdk28'.
CREATE PERFETTO TABLE _frames_maxsdk_28(
  frame_id LONG, ts TIMESTAMP, dur DURATION, do_frame_id JOINID,
  draw_frame_id JOINID, render_thread_utid JOINID, ui_thread_utid JOINID,
  sdk STRING, upid JOINID, process_name STRING
) AS
WITH do_frame AS (
  SELECT id, ts, utid, upid,
         lead(ts, 1, trace_end()) OVER (PARTITION BY upid ORDER BY ts, id)
           AS next_ts
  FROM thread_slice
  WHERE name = 'Choreographer#doFrame' AND is_main_thread = 1
), draw_frame AS (
  SELECT id, ts, ts + dur AS ts_end, utid, upid
  FROM thread_slice WHERE name = 'DrawFrame'
)
SELECT dense_rank() OVER (ORDER BY d.ts, d.id) AS frame_id, d.ts,
       max(w.ts_end) OVER (PARTITION BY d.id) - d.ts AS dur,
       d.id AS do_frame_id, w.id AS draw_frame_id,
       w.utid AS render_thread_utid, d.utid AS ui_thread_utid,
       'maxsdk28' AS sdk, d.upid, p.name AS process_name
FROM do_frame d
JOIN draw_frame w ON w.upid = d.upid AND w.ts >= d.ts AND w.ts < d.next_ts
JOIN process p ON p.upid = d.upid
ORDER BY d.ts, w.ts;
