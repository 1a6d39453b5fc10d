-- Counter values as intervals. Written for tracemerge from the public
-- documentation of the trace_processor module of the same name.

-- For each track of a counter-like table (columns id, ts, track_id,
-- value), the intervals over which the value holds: a row is kept where
-- the value changes, before a change, and at the ends of the track (the
-- rows inside a run of equal values are merged into the run's first), and
-- lasts until the next kept row, the last one until the end of the trace.
-- next_value is the next kept row's value; delta_value the difference to
-- the previous kept row's (NULL for the first).
CREATE PERFETTO MACRO counter_leading_intervals(counter_table TableOrSubquery)
RETURNS TableOrSubquery AS
(
  SELECT id, ts,
         lead(ts, 1, trace_end()) OVER kept - ts AS dur,
         track_id, value,
         lead(value) OVER kept AS next_value,
         value - lag(value) OVER kept AS delta_value
  FROM (
    SELECT id, ts, track_id, value,
           row_number() OVER track AS row_in_track,
           count() OVER (PARTITION BY track_id) AS rows_in_track,
           lag(value) OVER track AS value_before,
           lead(value) OVER track AS value_after
    FROM $counter_table
    WINDOW track AS (PARTITION BY track_id ORDER BY ts, id)
  )
  WHERE row_in_track = 1 OR row_in_track = rows_in_track
     OR value != value_before OR value != value_after
  WINDOW kept AS (PARTITION BY track_id ORDER BY ts, id)
)
