-- Android app startups: when each started and ended, its package and
-- type, the processes and threads that ran it, and helpers over their
-- slices. Written for tracemerge from the public documentation of the
-- trace_processor module of the same name.

INCLUDE PERFETTO MODULE android.process_metadata;
INCLUDE PERFETTO MODULE android.startup.startups_maxsdk28;
INCLUDE PERFETTO MODULE android.startup.startups_minsdk29;
INCLUDE PERFETTO MODULE android.startup.startups_minsdk33;

-- Which release's events the startups come from: the device's SDK version
-- when the trace records it (machine.android_sdk_version), else guessed
-- from the slices: `launchingActivity#<id>:<...>` means 33 and later,
-- `MetricsLogger:*` 29 to 32, neither 28 and older.
CREATE PERFETTO FUNCTION _tm_startup_sdk() RETURNS LONG AS
SELECT CASE
  WHEN sdk >= 33 THEN 33
  WHEN sdk >= 29 THEN 29
  WHEN sdk IS NOT NULL THEN 28
  WHEN EXISTS (SELECT 1 FROM slice WHERE name GLOB 'launchingActivity#*:*')
    THEN 33
  WHEN EXISTS (SELECT 1 FROM slice WHERE name GLOB 'MetricsLogger:*') THEN 29
  ELSE 28
END
FROM (SELECT max(android_sdk_version) AS sdk FROM machine);

-- The startups of the release's events, before their type is completed.
-- Ids: the platform's launchingActivity#<id> on 33 and later, else
-- 0, 1, ... in time order.
CREATE PERFETTO TABLE _android_startups_raw(
  startup_id LONG, ts TIMESTAMP, ts_end TIMESTAMP, dur DURATION,
  package STRING, startup_type STRING
) AS
SELECT row_number() OVER (ORDER BY ts) - 1 AS startup_id, ts, ts_end, dur,
       package, startup_type
FROM _startups_maxsdk28 WHERE _tm_startup_sdk() = 28
UNION ALL
SELECT row_number() OVER (ORDER BY ts) - 1, ts, ts_end, dur, package,
       startup_type
FROM _startups_minsdk29 WHERE _tm_startup_sdk() = 29
UNION ALL
SELECT startup_id, ts, ts_end, dur, package, startup_type
FROM _startups_minsdk33 WHERE _tm_startup_sdk() = 33;

-- How many slices named `name` start on thread utid in [start_ts, end_ts).
CREATE PERFETTO FUNCTION _startup_indicator_slice_count(
  start_ts TIMESTAMP, end_ts TIMESTAMP, utid JOINID, name STRING
) RETURNS LONG AS
SELECT count(*)
FROM thread_track t JOIN slice s ON s.track_id = t.id
WHERE t.utid = $utid AND s.name = $name AND s.ts >= $start_ts
  AND s.ts < $end_ts;

-- The processes that ran each startup: those of the startup's package
-- (package_list; without one, any process whose name starts with the
-- package) whose main thread resumed an activity (`activityResume`)
-- during the startup. startup_type is the platform's when it names one,
-- else read from the main thread's slices during the startup:
-- bindApplication, activityStart and activityResume: cold;
-- activityStart and activityResume: warm; activityResume only: hot.
CREATE PERFETTO TABLE android_startup_processes(
  startup_id JOINID, upid JOINID, pid LONG, startup_type STRING
) AS
WITH counted AS MATERIALIZED (
  SELECT r.startup_id, r.startup_type, p.upid, p.pid,
    _startup_indicator_slice_count(r.ts, r.ts_end, t.utid, 'bindApplication')
      AS bind_app,
    _startup_indicator_slice_count(r.ts, r.ts_end, t.utid, 'activityStart')
      AS a_start,
    _startup_indicator_slice_count(r.ts, r.ts_end, t.utid, 'activityResume')
      AS a_resume
  FROM _android_startups_raw r
  JOIN android_process_metadata p
    ON r.package = p.package_name
    OR ((SELECT count(*) FROM package_list) = 0
        AND p.process_name GLOB r.package || '*')
  JOIN thread t ON t.upid = p.upid AND t.is_main_thread
), typed AS (
  SELECT startup_id, upid, pid,
    CASE
      WHEN startup_type IS NOT NULL THEN startup_type
      WHEN bind_app > 0 AND a_start > 0 AND a_resume > 0 THEN 'cold'
      WHEN a_start > 0 AND a_resume > 0 THEN 'warm'
      WHEN a_resume > 0 THEN 'hot'
    END AS startup_type
  FROM counted WHERE a_resume > 0
)
SELECT * FROM typed WHERE startup_type IS NOT NULL;

-- Every app startup in the trace.
CREATE PERFETTO VIEW android_startups(
  startup_id LONG, ts TIMESTAMP, ts_end TIMESTAMP, dur DURATION,
  package STRING, startup_type STRING
) AS
SELECT r.startup_id, r.ts, r.ts_end, r.dur, r.package,
       coalesce(r.startup_type, max(p.startup_type)) AS startup_type
FROM _android_startups_raw r
LEFT JOIN android_startup_processes p USING (startup_id)
GROUP BY r.startup_id;

-- Every thread of the processes that ran each startup.
CREATE PERFETTO VIEW android_startup_threads(
  startup_id JOINID, ts TIMESTAMP, dur DURATION, upid JOINID, pid LONG,
  utid JOINID, tid LONG, thread_name STRING, is_main_thread BOOL
) AS
SELECT s.startup_id, s.ts, s.dur, p.upid, p.pid, t.utid, t.tid,
       t.name AS thread_name, t.is_main_thread
FROM android_startups s
JOIN android_startup_processes p USING (startup_id)
JOIN thread t ON t.upid = p.upid;

-- Every slice that starts during a startup on one of its threads.
CREATE PERFETTO VIEW android_thread_slices_for_all_startups(
  startup_ts TIMESTAMP, startup_ts_end TIMESTAMP, startup_id JOINID,
  utid JOINID, tid LONG, thread_name STRING, is_main_thread BOOL,
  arg_set_id ARGSETID, slice_id JOINID, slice_name STRING,
  slice_ts TIMESTAMP, slice_dur DURATION
) AS
SELECT st.ts AS startup_ts, st.ts + st.dur AS startup_ts_end, st.startup_id,
       st.utid, st.tid, st.thread_name, st.is_main_thread, s.arg_set_id,
       s.id AS slice_id, s.name AS slice_name, s.ts AS slice_ts,
       s.dur AS slice_dur
FROM android_startup_threads st
JOIN thread_track tt ON tt.utid = st.utid
JOIN slice s ON s.track_id = tt.id
WHERE s.ts BETWEEN st.ts AND st.ts + st.dur;

-- The slices of a startup whose name matches the glob slice_name.
CREATE PERFETTO FUNCTION android_slices_for_startup_and_slice_name(
  startup_id JOINID, slice_name STRING
) RETURNS TABLE(
  slice_id JOINID, slice_name STRING, slice_ts TIMESTAMP,
  slice_dur DURATION, thread_name STRING, tid LONG, arg_set_id ARGSETID
) AS
SELECT slice_id, slice_name, slice_ts, slice_dur, thread_name, tid,
       arg_set_id
FROM android_thread_slices_for_all_startups
WHERE startup_id = $startup_id AND slice_name GLOB $slice_name;

-- The class-loading slices (`L<class descriptor>;`) of every startup.
CREATE PERFETTO VIEW android_class_loading_for_startup(
  slice_id JOINID, startup_id JOINID, slice_name STRING, slice_ts TIMESTAMP,
  slice_dur DURATION, thread_name STRING, tid LONG, arg_set_id ARGSETID
) AS
SELECT slice_id, startup_id, slice_name, slice_ts, slice_dur, thread_name,
       tid, arg_set_id
FROM android_thread_slices_for_all_startups
WHERE slice_name GLOB 'L*;';

-- A startup's `binder transaction` slices longer than threshold, with the
-- process named by their `destination process` arg.
CREATE PERFETTO FUNCTION android_binder_transaction_slices_for_startup(
  startup_id JOINID, threshold DOUBLE
) RETURNS TABLE(
  id LONG, slice_dur DURATION, thread_name STRING, process STRING,
  arg_set_id ARGSETID, is_main_thread BOOL
) AS
SELECT s.slice_id AS id, s.slice_dur, s.thread_name, p.name AS process,
       s.arg_set_id, s.is_main_thread
FROM android_thread_slices_for_all_startups s
JOIN process p ON extract_arg(s.arg_set_id, 'destination process') = p.pid
WHERE s.startup_id = $startup_id AND s.slice_name GLOB 'binder transaction'
  AND s.slice_dur > $threshold;

-- Total duration of a startup's slices whose name matches the glob.
CREATE PERFETTO FUNCTION android_sum_dur_for_startup_and_slice(
  startup_id JOINID, slice_name STRING
) RETURNS LONG AS
SELECT sum(slice_dur) FROM android_thread_slices_for_all_startups
WHERE startup_id = $startup_id AND slice_name GLOB $slice_name;

-- The same, on main threads only.
CREATE PERFETTO FUNCTION android_sum_dur_on_main_thread_for_startup_and_slice(
  startup_id JOINID, slice_name STRING
) RETURNS LONG AS
SELECT sum(slice_dur) FROM android_thread_slices_for_all_startups
WHERE startup_id = $startup_id AND slice_name GLOB $slice_name
  AND is_main_thread;
