-- Readable names of scheduling states. Written for tracemerge from the
-- public documentation of the trace_processor module of the same name.

-- The human-readable name of a thread_state.state / sched.end_state value.
CREATE PERFETTO FUNCTION sched_state_to_human_readable_string(
  short_name STRING
) RETURNS STRING AS
SELECT CASE $short_name
  WHEN 'Running' THEN 'Running'
  WHEN 'R' THEN 'Runnable'
  WHEN 'R+' THEN 'Runnable (Preempted)'
  WHEN 'S' THEN 'Sleeping'
  WHEN 'D' THEN 'Uninterruptible Sleep'
  WHEN 'T' THEN 'Stopped'
  WHEN 't' THEN 'Traced'
  WHEN 'X' THEN 'Exit (Dead)'
  WHEN 'Z' THEN 'Exit (Zombie)'
  WHEN 'x' THEN 'Task Dead'
  WHEN 'I' THEN 'Idle'
  WHEN 'K' THEN 'Wakekill'
  WHEN 'W' THEN 'Waking'
  WHEN 'P' THEN 'Parked'
  WHEN 'N' THEN 'No Load'
  ELSE $short_name
END;

-- The same, followed by " (IO)" or " (non-IO)" when io_wait is known (a
-- NULL state reads as the empty string).
CREATE PERFETTO FUNCTION sched_state_io_to_human_readable_string(
  sched_state STRING,
  io_wait BOOL
) RETURNS STRING AS
SELECT printf('%s%s', sched_state_to_human_readable_string($sched_state),
              CASE $io_wait WHEN 1 THEN ' (IO)' WHEN 0 THEN ' (non-IO)'
              ELSE '' END);
