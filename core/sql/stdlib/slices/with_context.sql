-- Slices with the thread or process they belong to. Written for tracemerge
-- from the public documentation of the trace_processor module of the same
-- name.

-- Every slice on a thread track, with its track, thread and process.
CREATE PERFETTO VIEW thread_slice(
  id LONG, ts TIMESTAMP, dur LONG, category STRING, name STRING,
  track_id LONG, track_name STRING, thread_name STRING, utid LONG,
  tid LONG, is_main_thread BOOL, process_name STRING, upid LONG, pid LONG,
  depth LONG, parent_id LONG, arg_set_id LONG, thread_ts TIMESTAMP,
  thread_dur LONG
) AS
SELECT s.id, s.ts, s.dur, s.category, s.name, s.track_id,
       tt.name AS track_name, t.name AS thread_name, t.utid, t.tid,
       t.is_main_thread, p.name AS process_name, p.upid, p.pid, s.depth,
       s.parent_id, s.arg_set_id, s.thread_ts, s.thread_dur
FROM slice s
JOIN thread_track tt ON s.track_id = tt.id
JOIN thread t ON t.utid = tt.utid
LEFT JOIN process p ON p.upid = t.upid;

-- Every slice on a process track, with its track and process.
CREATE PERFETTO VIEW process_slice(
  id LONG, ts TIMESTAMP, dur LONG, category STRING, name STRING,
  track_id LONG, track_name STRING, process_name STRING, upid LONG,
  pid LONG, depth LONG, parent_id LONG, arg_set_id LONG,
  thread_ts TIMESTAMP, thread_dur LONG
) AS
SELECT s.id, s.ts, s.dur, s.category, s.name, s.track_id,
       pt.name AS track_name, p.name AS process_name, p.upid, p.pid,
       s.depth, s.parent_id, s.arg_set_id, s.thread_ts, s.thread_dur
FROM slice s
JOIN process_track pt ON s.track_id = pt.id
JOIN process p ON p.upid = pt.upid;
