-- The `launching: <package>` slices of Android's activity manager. Written
-- for tracemerge from the public documentation of trace_processor's
-- android.startup modules.

INCLUDE PERFETTO MODULE slices.with_context;

-- Every `launching: <package>` slice on a process track of system_server
-- (or of a process with no name).
CREATE PERFETTO TABLE _startup_events(
  ts TIMESTAMP, dur DURATION, ts_end TIMESTAMP, package_name STRING
) AS
SELECT ts, dur, ts + dur AS ts_end, str_split(name, ': ', 1) AS package_name
FROM process_slice
WHERE name GLOB 'launching: *'
  AND (process_name IS NULL OR process_name = 'system_server');
