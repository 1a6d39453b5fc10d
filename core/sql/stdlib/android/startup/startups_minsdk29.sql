-- App startups as Android 10 to 12 (SDK 29-32) trace them. Written for
-- tracemerge from the public documentation of trace_processor's
-- android.startup modules.

INCLUDE PERFETTO MODULE android.startup.startup_events;

-- Each `MetricsLogger:launchObserverNotifyIntentStarted` slice opens a
-- span that lasts until the next one (or the trace end). A span is a
-- startup when exactly one `launching: <package>` slice starts in it, it
-- ends in it too, and a `MetricsLogger:launchObserverNotifyActivityLaunchFinished`
-- slice starts in it. The startup runs from the intent to the end of the
-- launching slice; its package is the launching slice's; its type is not
-- traced (NULL: android_startups derives it).
CREATE PERFETTO TABLE _startups_minsdk29(
  ts TIMESTAMP, ts_end TIMESTAMP, dur DURATION, package STRING,
  startup_type STRING
) AS
WITH spans AS (
  SELECT ts, lead(ts, 1, trace_end()) OVER (ORDER BY ts) AS span_end
  FROM slice WHERE name = 'MetricsLogger:launchObserverNotifyIntentStarted'
), startup_spans AS (
  SELECT * FROM spans s
  WHERE (SELECT count(*) FROM _startup_events e
         WHERE e.ts BETWEEN s.ts AND s.span_end) = 1
    AND EXISTS (SELECT 1 FROM slice f
                WHERE f.name = 'MetricsLogger:launchObserverNotifyActivityLaunchFinished'
                  AND f.ts BETWEEN s.ts AND s.span_end)
)
SELECT s.ts, e.ts_end, e.ts_end - s.ts AS dur, e.package_name AS package,
       NULL AS startup_type
FROM startup_spans s
JOIN _startup_events e
  ON e.ts BETWEEN s.ts AND s.span_end AND e.ts_end BETWEEN s.ts AND s.span_end
ORDER BY s.ts;
