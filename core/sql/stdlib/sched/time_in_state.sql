-- Time threads and CPUs spend in each scheduling state. Written for
-- tracemerge from the public documentation of the trace_processor module
-- of the same name.

-- Per thread and state: the thread's total time in thread_state, the time
-- in that state, and the share in whole percent (rounded down).
CREATE PERFETTO TABLE sched_time_in_state_for_thread(
  utid LONG, total_runtime LONG, state STRING, time_in_state LONG,
  percentage_in_state LONG
) AS
WITH per_state AS (
  SELECT utid, state, sum(dur) AS time_in_state
  FROM thread_state GROUP BY utid, state
), per_thread AS (
  SELECT utid, sum(time_in_state) AS total FROM per_state GROUP BY utid
)
SELECT s.utid, t.total AS total_runtime, s.state, s.time_in_state,
       s.time_in_state * 100 / t.total AS percentage_in_state
FROM per_state s JOIN per_thread t USING (utid);

CREATE PERFETTO MACRO _tm_share_of_state(state Expr)
RETURNS Expr AS max(iif(state = $state, percentage_in_state, NULL));

-- Per thread: percent of its time running, runnable, preempted, sleeping,
-- in uninterruptible sleep, and in any other state.
CREATE PERFETTO TABLE sched_percentage_of_time_in_state(
  utid LONG, running LONG, runnable LONG, runnable_preempted LONG,
  sleeping LONG, uninterruptible_sleep LONG, other LONG
) AS
SELECT utid,
       _tm_share_of_state!('Running') AS running,
       _tm_share_of_state!('R') AS runnable,
       _tm_share_of_state!('R+') AS runnable_preempted,
       _tm_share_of_state!('S') AS sleeping,
       _tm_share_of_state!('D') AS uninterruptible_sleep,
       sum(iif(state IN ('T', 't', 'X', 'Z', 'x', 'I', 'K', 'W', 'P', 'N'),
               time_in_state, NULL)) * 100 / total_runtime AS other
FROM sched_time_in_state_for_thread
GROUP BY utid;

-- Time thread `utid` spent in each (state, io_wait, blocked_function)
-- within [ts, ts + dur), longest first.
CREATE PERFETTO FUNCTION sched_time_in_state_for_thread_in_interval(
  ts TIMESTAMP, dur LONG, utid LONG
) RETURNS TABLE(state STRING, io_wait BOOL, blocked_function LONG, dur LONG)
AS
SELECT state, io_wait, blocked_function,
       sum(min(ts + dur, $ts + $dur) - max(ts, $ts)) AS dur
FROM thread_state
WHERE utid = $utid AND dur > 0 AND ts < $ts + $dur AND ts + dur > $ts
GROUP BY 1, 2, 3
ORDER BY 4 DESC;

-- The same, per cpu as well.
CREATE PERFETTO FUNCTION sched_time_in_state_and_cpu_for_thread_in_interval(
  ts TIMESTAMP, dur LONG, utid LONG
) RETURNS TABLE(state STRING, io_wait BOOL, cpu LONG, blocked_function LONG,
                dur LONG)
AS
SELECT state, io_wait, cpu, blocked_function,
       sum(min(ts + dur, $ts + $dur) - max(ts, $ts)) AS dur
FROM thread_state
WHERE utid = $utid AND dur > 0 AND ts < $ts + $dur AND ts + dur > $ts
GROUP BY 1, 2, 3, 4
ORDER BY 5 DESC;

-- Time cpu `cpu` spent in sched slices ending in each end_state within
-- [ts, ts + dur).
CREATE PERFETTO FUNCTION sched_time_in_state_for_cpu_in_interval(
  cpu LONG, ts TIMESTAMP, dur LONG
) RETURNS TABLE(end_state STRING, dur LONG)
AS
SELECT end_state, sum(min(ts + dur, $ts + $dur) - max(ts, $ts)) AS dur
FROM sched
WHERE cpu = $cpu AND dur > 0 AND ts < $ts + $dur AND ts + dur > $ts
GROUP BY end_state;
