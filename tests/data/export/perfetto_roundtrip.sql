-- The queries whose answers must be the same on a merge and on the import
-- of its Perfetto export (tests/test_e2e_export.c runs each on both saved
-- databases and compares every row). Machines, threads and processes are
-- named by machine name, tid and pid: row ids may differ. An arg key is
-- compared without its namespace ("args." for JSON, "debug." for
-- TrackEvent debug annotations, the only namespaces the two formats give).

-- slices: counts, durations, nesting
SELECT count(*) FROM slice;
SELECT count(*), sum(dur), min(ts), max(ts), sum(depth) FROM slice;
SELECT count(*) FROM slice WHERE dur = 0;
SELECT count(*) FROM slice WHERE dur = -1;
SELECT max(depth), count(DISTINCT parent_id) FROM slice;
SELECT m.name, count(*), sum(s.dur) FROM slice s JOIN track t ON s.track_id = t.id JOIN machine m ON t.machine_id = m.id GROUP BY 1 ORDER BY 1;
SELECT m.name, th.tid, th.name, count(*), sum(s.dur), sum(s.depth) FROM slice s JOIN thread_track tt ON s.track_id = tt.id JOIN thread th USING (utid) JOIN machine m ON th.machine_id = m.id GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
SELECT m.name, p.pid, p.name, count(*), sum(s.dur) FROM slice s JOIN thread_track tt ON s.track_id = tt.id JOIN thread th USING (utid) JOIN process p USING (upid) JOIN machine m ON p.machine_id = m.id GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
SELECT m.name, t.name, count(*), sum(s.dur) FROM slice s JOIN track t ON s.track_id = t.id JOIN machine m ON t.machine_id = m.id WHERE NOT EXISTS (SELECT 1 FROM thread_track tt WHERE tt.id = t.id) GROUP BY 1, 2 ORDER BY 1, 2;
SELECT s.name, s.category, count(*), sum(s.dur), sum(s.depth) FROM slice s GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 60;
SELECT p.name, c.name, count(*) FROM slice p JOIN slice c ON c.parent_id = p.id GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 60;
SELECT ts, dur, depth, name FROM slice ORDER BY ts, depth, name, dur LIMIT 300;
-- flows
SELECT count(*) FROM flow;
SELECT so.name, si.name, count(*), sum(si.ts - so.ts) FROM flow f JOIN slice so ON f.slice_out = so.id JOIN slice si ON f.slice_in = si.id GROUP BY 1, 2 ORDER BY 1, 2;
-- args
SELECT count(*) FROM args a JOIN slice s ON s.arg_set_id = a.arg_set_id;
SELECT CASE WHEN a.key GLOB 'args.*' OR a.key GLOB 'debug.*' THEN substr(a.key, instr(a.key, '.') + 1) ELSE a.key END AS k, a.value_type, count(*), sum(a.int_value), count(DISTINCT a.string_value), sum(a.real_value) FROM args a JOIN slice s ON s.arg_set_id = a.arg_set_id GROUP BY 1, 2 ORDER BY 1, 2;
SELECT s.ts, s.name, group_concat(CASE WHEN a.key GLOB 'args.*' OR a.key GLOB 'debug.*' THEN substr(a.key, instr(a.key, '.') + 1) ELSE a.key END || '=' || coalesce(a.display_value, 'NULL'), ';') AS a FROM slice s JOIN args a USING (arg_set_id) GROUP BY s.id ORDER BY s.ts, s.name, a LIMIT 300;
-- counters
SELECT count(*), sum(value), min(ts), max(ts) FROM counter;
SELECT m.name, t.name, count(*), sum(c.value), min(c.ts), max(c.ts) FROM counter c JOIN counter_track t ON c.track_id = t.id JOIN machine m ON t.machine_id = m.id GROUP BY 1, 2 ORDER BY 1, 2;
-- processes and threads
SELECT m.name, count(*) FROM thread t JOIN machine m ON t.machine_id = m.id GROUP BY 1 ORDER BY 1;
SELECT m.name, t.tid, t.name, p.pid FROM thread t JOIN machine m ON t.machine_id = m.id LEFT JOIN process p USING (upid) ORDER BY 1, 2, 3, 4;
SELECT m.name, p.pid, p.name, p.cmdline, pp.pid, p.uid FROM process p JOIN machine m ON p.machine_id = m.id LEFT JOIN process pp ON p.parent_upid = pp.upid ORDER BY 1, 2, 3;
-- scheduling, per cpu
SELECT count(*) FROM sched;
SELECT count(*) FROM cpu;
SELECT m.name, c.cpu, count(*), sum(s.dur), min(s.ts), max(s.ts) FROM sched s JOIN cpu c USING (ucpu) JOIN machine m ON c.machine_id = m.id GROUP BY 1, 2 ORDER BY 1, 2;
SELECT c.cpu, t.tid, count(*), sum(s.dur), sum(s.priority) FROM sched s JOIN cpu c USING (ucpu) JOIN thread t USING (utid) GROUP BY 1, 2 ORDER BY 1, 2;
SELECT end_state, count(*), sum(dur) FROM sched GROUP BY 1 ORDER BY 1;
-- thread states
SELECT count(*), sum(dur) FROM thread_state;
SELECT state, count(*), sum(dur), count(waker_utid), count(io_wait), sum(io_wait) FROM thread_state GROUP BY 1 ORDER BY 1;
SELECT t.tid, ts.state, count(*), sum(ts.dur) FROM thread_state ts JOIN thread t USING (utid) GROUP BY 1, 2 ORDER BY 1, 2;
SELECT t.tid, w.tid, count(*) FROM thread_state ts JOIN thread t USING (utid) JOIN thread w ON ts.waker_utid = w.utid GROUP BY 1, 2 ORDER BY 1, 2;
-- callstack samples (PerfSample packets)
SELECT count(*), count(DISTINCT callsite_id) FROM perf_sample;
SELECT t.tid, s.cpu, count(*), min(s.ts), max(s.ts) FROM perf_sample s JOIN thread t USING (utid) GROUP BY 1, 2 ORDER BY 1, 2;
SELECT f.name, c.depth, count(*) FROM perf_sample s JOIN stack_profile_callsite c ON s.callsite_id = c.id JOIN stack_profile_frame f ON c.frame_id = f.id GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 40;
SELECT count(*) FROM perf_sample s JOIN stack_profile_callsite c ON s.callsite_id = c.id JOIN stack_profile_callsite p ON p.id = c.parent_id;
-- logs, packages, bounds, machines
SELECT count(*), min(ts), max(ts), count(DISTINCT msg) FROM android_logs;
SELECT l.ts, l.prio, l.tag, l.msg, t.tid FROM android_logs l LEFT JOIN thread t USING (utid) ORDER BY 1, 3, 4;
SELECT package_name, uid, debuggable, profileable_from_shell, version_code FROM package_list ORDER BY 1;
SELECT start_ts, end_ts FROM trace_bounds;
-- Tracks per machine, but for a process's own track that holds nothing: a
-- Perfetto file scopes a track to a process by naming the process's
-- descriptor as its parent, and a reader (ours, trace_processor's) makes
-- the track of a described parent, so the export's import has one where the
-- merge of a Chrome JSON had none.
SELECT m.name, count(*) FROM track t JOIN machine m ON t.machine_id = m.id WHERE NOT (t.id IN (SELECT id FROM process_track WHERE name IS NULL) AND NOT EXISTS (SELECT 1 FROM slice s WHERE s.track_id = t.id) AND NOT EXISTS (SELECT 1 FROM counter c WHERE c.track_id = t.id)) GROUP BY 1 ORDER BY 1;
SELECT name, num_cpus, sysname, release, arch FROM machine ORDER BY 1;
-- REALTIME: each machine's readings, so wall-clock time stays meaningful
SELECT m.name, count(*), min(c.ts), max(c.ts), min(c.clock_value - c.ts), max(c.clock_value - c.ts) FROM clock_snapshot c JOIN machine m ON c.machine_id = m.id WHERE c.clock_name = 'REALTIME' GROUP BY 1 ORDER BY 1;
