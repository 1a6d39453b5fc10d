-- App startups as Android 9 (SDK 28) and older trace them. Written for
-- tracemerge from the public documentation of trace_processor's
-- android.startup modules.

INCLUDE PERFETTO MODULE android.frames.timeline;
INCLUDE PERFETTO MODULE android.startup.startup_events;
INCLUDE PERFETTO MODULE slices.with_context;

-- Cold and warm startups: the `launching: <package>` slices (type NULL).
-- Hot startups have none: an `activityResume` slice on a main thread that
-- is not inside one of those is a hot startup of that process (its name
-- as package), ending with the end of the first frame after it.
CREATE PERFETTO TABLE _startups_maxsdk28(
  ts TIMESTAMP, ts_end TIMESTAMP, dur DURATION, package STRING,
  startup_type STRING
) AS
WITH warm_and_cold AS (
  SELECT ts, ts_end, package_name AS package, NULL AS startup_type
  FROM _startup_events
), hot AS (
  SELECT s.ts, f.ts + f.dur AS ts_end,
         coalesce(s.process_name, s.thread_name, 'unknown') AS package,
         'hot' AS startup_type
  FROM thread_slice s, android_first_frame_after(s.ts) f
  WHERE s.name = 'activityResume' AND s.is_main_thread
    AND NOT EXISTS (SELECT 1 FROM warm_and_cold w
                    WHERE s.ts BETWEEN w.ts AND w.ts_end)
)
SELECT ts, ts_end, ts_end - ts AS dur, package, startup_type
FROM (SELECT * FROM warm_and_cold UNION ALL SELECT * FROM hot)
ORDER BY ts;
