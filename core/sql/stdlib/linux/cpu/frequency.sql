-- CPU frequency as intervals. Written for tracemerge from the public
-- documentation of the trace_processor module of the same name.

INCLUDE PERFETTO MODULE counters.intervals;

-- Each interval over which a CPU's frequency (the `cpufreq` counter of
-- cpu_counter_track, kHz) is constant.
CREATE PERFETTO TABLE cpu_frequency_counters(
  id LONG, track_id LONG, ts TIMESTAMP, dur LONG, freq LONG, ucpu LONG,
  cpu LONG
) AS
SELECT c.id, c.track_id, c.ts, c.dur, cast_int!(c.value) AS freq,
       cct.cpu AS ucpu, cpu.cpu AS cpu
FROM counter_leading_intervals!((
  SELECT counter.* FROM counter
  JOIN cpu_counter_track t ON t.id = counter.track_id AND t.name = 'cpufreq'
)) c
JOIN cpu_counter_track cct ON cct.id = c.track_id
LEFT JOIN cpu ON cpu.id = cct.cpu;
