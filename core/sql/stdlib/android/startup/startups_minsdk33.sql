-- App startups as Android 13 (SDK 33) and later trace them. Written for
-- tracemerge from the public documentation of trace_processor's
-- android.startup modules.

-- A startup is the async slice `launchingActivity#<id>` (dur > 0) of
-- system_server, closed by the instant
-- `launchingActivity#<id>:completed[-<type>]:<package>` (dur 0; the
-- `completed-same-process` ones are not startups). startup_type is the
-- <type> (hot, warm, cold), else NULL.
CREATE PERFETTO TABLE _startups_minsdk33(
  startup_id LONG, ts TIMESTAMP, ts_end TIMESTAMP, dur DURATION,
  package STRING, startup_type STRING
) AS
WITH launching AS (
  SELECT ts, dur, cast_int!(substr(name, 19)) AS startup_id
  FROM slice
  WHERE name GLOB 'launchingActivity#*' AND dur > 0 AND instr(name, ':') = 0
), completed AS (
  SELECT cast_int!(str_split(rest, ':', 0)) AS startup_id,
         str_split(rest, ':', 2) AS package,
         CASE str_split(rest, ':', 1)
           WHEN 'completed-hot' THEN 'hot'
           WHEN 'completed-warm' THEN 'warm'
           WHEN 'completed-cold' THEN 'cold'
         END AS startup_type
  FROM (SELECT substr(name, 19) AS rest FROM slice
        WHERE dur = 0 AND name GLOB 'launchingActivity#*:completed*:*'
          AND NOT name GLOB '*:completed-same-process:*')
  GROUP BY 1, 2, 3
)
SELECT l.startup_id, l.ts, l.ts + l.dur AS ts_end, l.dur, c.package,
       c.startup_type
FROM launching l JOIN completed c USING (startup_id);
