-- Frames of Android apps: the UI thread's `Choreographer#doFrame <vsync>`,
-- the RenderThread's `DrawFrame <vsync>` (`DrawFrames <vsync>` on newer
-- releases) and SurfaceFlinger's frame timeline (expected_ and
-- actual_frame_timeline_slice, whose names are the vsync id). Written for
-- tracemerge from the public documentation of the trace_processor module
-- of the same name.

INCLUDE PERFETTO MODULE slices.with_context;
INCLUDE PERFETTO MODULE android.frames.timeline_maxsdk28;

-- Thread slices whose name matches glob_str, with the vsync id that
-- follows the name's first space. Names whose second word is not a number
-- ("Choreographer#doFrame - resynced to 12 in 2.0ms": 0) or is -1 (an
-- invalid vsync) are left out.
CREATE PERFETTO FUNCTION _get_frame_table_with_id(glob_str STRING)
RETURNS TABLE(id LONG, frame_id LONG, utid LONG, upid LONG, ts TIMESTAMP) AS
SELECT id, frame_id, utid, upid, ts
FROM (SELECT id, cast_int!(str_split(name, ' ', 1)) AS frame_id, utid, upid,
             ts
      FROM thread_slice WHERE name GLOB $glob_str)
WHERE frame_id != 0 AND frame_id != -1;

-- Every `Choreographer#doFrame <vsync>` slice, with its vsync id (frame_id).
CREATE PERFETTO TABLE android_frames_choreographer_do_frame(
  id LONG, frame_id LONG, ui_thread_utid JOINID, upid JOINID, ts TIMESTAMP
) AS
SELECT id, frame_id, utid AS ui_thread_utid, upid, ts
FROM _get_frame_table_with_id('Choreographer#doFrame*');

-- Every `DrawFrame <vsync>` / `DrawFrames <vsync>` slice, with its vsync id.
-- One vsync may have several (one per layer drawn).
CREATE PERFETTO TABLE android_frames_draw_frame(
  id LONG, frame_id LONG, render_thread_utid JOINID, upid JOINID
) AS
SELECT id, frame_id, utid AS render_thread_utid, upid
FROM _get_frame_table_with_id('DrawFrame*');

-- One row per doFrame, DrawFrame and actual timeline slice of a frame
-- (same vsync id, same process). ts and dur are the actual timeline
-- slice's; without one, ts is the doFrame's start and dur runs to the end
-- of the frame's last DrawFrame. layer_id is the number after the '#' of
-- the actual slice's layer name. When the trace has no actual timeline
-- at all (SDK 28 and older) the rows are _frames_maxsdk_28's, without
-- timeline ids or layers. upid is the doFrame's process (trace_processor
-- takes the expected timeline slice's: the same whenever there is one).
CREATE PERFETTO TABLE android_frames_layers(
  frame_id LONG, ts TIMESTAMP, dur DURATION, ts_end TIMESTAMP,
  do_frame_id JOINID, draw_frame_id JOINID, actual_frame_timeline_id JOINID,
  expected_frame_timeline_id JOINID, render_thread_utid JOINID,
  ui_thread_utid JOINID, layer_id LONG, layer_name STRING, upid JOINID,
  process_name STRING
) AS
WITH do_draw AS MATERIALIZED (
  SELECT d.frame_id, d.upid, d.id AS do_frame_id, d.ts AS do_ts,
         d.ui_thread_utid, w.id AS draw_frame_id, w.render_thread_utid,
         ws.ts + ws.dur AS draw_end
  FROM android_frames_choreographer_do_frame d
  JOIN android_frames_draw_frame w USING (frame_id, upid)
  JOIN slice ws ON ws.id = w.id
), fallback AS (
  SELECT frame_id, upid, min(do_ts) AS ts, max(draw_end) - min(do_ts) AS dur
  FROM do_draw GROUP BY frame_id, upid
), actual AS (
  SELECT cast_int!(name) AS frame_id, upid, id, ts, dur, layer_name
  FROM actual_frame_timeline_slice
), expected AS (
  SELECT cast_int!(name) AS frame_id, upid, id
  FROM expected_frame_timeline_slice
), after_28 AS (
  SELECT dd.frame_id, coalesce(a.ts, f.ts) AS ts, coalesce(a.dur, f.dur) AS dur,
         dd.do_frame_id, dd.draw_frame_id, a.id AS actual_frame_timeline_id,
         e.id AS expected_frame_timeline_id, dd.render_thread_utid,
         dd.ui_thread_utid,
         cast_int!(str_split(a.layer_name, '#', 1)) AS layer_id, a.layer_name,
         dd.upid, p.name AS process_name
  FROM do_draw dd
  JOIN fallback f USING (frame_id, upid)
  JOIN process p ON p.upid = dd.upid
  LEFT JOIN actual a ON a.frame_id = dd.frame_id AND a.upid = dd.upid
  LEFT JOIN expected e ON e.frame_id = dd.frame_id AND e.upid = dd.upid
  WHERE EXISTS (SELECT 1 FROM actual_frame_timeline_slice)
), up_to_28 AS (
  SELECT frame_id, ts, dur, do_frame_id, draw_frame_id,
         NULL AS actual_frame_timeline_id, NULL AS expected_frame_timeline_id,
         render_thread_utid, ui_thread_utid, NULL AS layer_id,
         NULL AS layer_name, upid, process_name
  FROM _frames_maxsdk_28
  WHERE NOT EXISTS (SELECT 1 FROM actual_frame_timeline_slice)
)
SELECT frame_id, ts, dur, ts + dur AS ts_end, do_frame_id, draw_frame_id,
       actual_frame_timeline_id, expected_frame_timeline_id,
       render_thread_utid, ui_thread_utid, layer_id, layer_name, upid,
       process_name
FROM (SELECT * FROM after_28 UNION ALL SELECT * FROM up_to_28)
ORDER BY frame_id, upid, ts, do_frame_id, draw_frame_id,
         actual_frame_timeline_id;

-- One row per frame (vsync id) of a process: its earliest start, longest
-- duration, first doFrame, DrawFrame, actual and expected timeline slice,
-- and how many DrawFrames and actual and expected timeline slices it has.
-- (trace_processor prints 1 as expected_frame_timeline_count whatever the
-- trace holds; here it is the count its documentation describes.)
CREATE PERFETTO TABLE android_frames(
  frame_id LONG, ts TIMESTAMP, dur DURATION, do_frame_id JOINID,
  draw_frame_id JOINID, actual_frame_timeline_id JOINID,
  expected_frame_timeline_id JOINID, render_thread_utid JOINID,
  ui_thread_utid JOINID, actual_frame_timeline_count LONG,
  expected_frame_timeline_count LONG, draw_frame_count LONG, upid JOINID,
  process_name STRING
) AS
SELECT frame_id, min(ts) AS ts, max(dur) AS dur,
       min(do_frame_id) AS do_frame_id, min(draw_frame_id) AS draw_frame_id,
       min(actual_frame_timeline_id) AS actual_frame_timeline_id,
       min(expected_frame_timeline_id) AS expected_frame_timeline_id,
       min(render_thread_utid) AS render_thread_utid,
       min(ui_thread_utid) AS ui_thread_utid,
       count(DISTINCT actual_frame_timeline_id) AS actual_frame_timeline_count,
       count(DISTINCT expected_frame_timeline_id)
         AS expected_frame_timeline_count,
       count(DISTINCT draw_frame_id) AS draw_frame_count, upid, process_name
FROM android_frames_layers
GROUP BY frame_id, upid
ORDER BY ts, upid;

-- The first frame (of any process) that starts after ts: at most one row.
CREATE PERFETTO FUNCTION android_first_frame_after(ts TIMESTAMP)
RETURNS TABLE(
  frame_id LONG, ts TIMESTAMP, dur DURATION, do_frame_id JOINID,
  draw_frame_id JOINID, actual_frame_timeline_id JOINID,
  expected_frame_timeline_id JOINID, render_thread_utid JOINID,
  ui_thread_utid JOINID
) AS
SELECT frame_id, ts, dur, do_frame_id, draw_frame_id,
       actual_frame_timeline_id, expected_frame_timeline_id,
       render_thread_utid, ui_thread_utid
FROM android_frames
WHERE ts > $ts
ORDER BY ts
LIMIT 1;
