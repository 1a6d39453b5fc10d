-- The queries whose answers must be the same on a merge and on the import
-- of its JSON export, on what JSON can say (no scheduling, samples or
-- logs): machines, processes and threads through the xm_ views of
-- json_prelude_merged.sql / json_prelude_export.sql; arg keys without
-- their namespace, as in perfetto_roundtrip.sql.

-- slices
SELECT count(*) FROM slice;
SELECT count(*), sum(dur), min(ts), max(ts + dur) FROM slice;
SELECT count(*) FROM slice WHERE dur = 0;
SELECT count(*) FROM slice WHERE dur = -1;
SELECT x.machine, count(*), sum(s.dur) FROM slice s JOIN xm_track x ON s.track_id = x.id GROUP BY 1 ORDER BY 1;
SELECT x.machine, x.tid, x.name, count(*), sum(s.dur), sum(s.depth), max(s.depth) FROM slice s JOIN thread_track tt ON s.track_id = tt.id JOIN xm_thread x USING (utid) GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
SELECT x.machine, x.pid, x.name, count(*), sum(s.dur) FROM slice s JOIN thread_track tt ON s.track_id = tt.id JOIN thread USING (utid) JOIN xm_process x USING (upid) GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
SELECT x.machine, count(*), sum(s.dur) FROM slice s JOIN xm_track x ON s.track_id = x.id WHERE NOT EXISTS (SELECT 1 FROM thread_track tt WHERE tt.id = s.track_id) GROUP BY 1 ORDER BY 1;
SELECT s.name, s.category, count(*), sum(s.dur) FROM slice s GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 60;
SELECT p.name, c.name, count(*) FROM slice p JOIN slice c ON c.parent_id = p.id JOIN thread_track tt ON p.track_id = tt.id GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 40;
-- flows
SELECT count(*) FROM flow;
SELECT so.name, si.name, count(*), sum(si.ts - so.ts) FROM flow f JOIN slice so ON f.slice_out = so.id JOIN slice si ON f.slice_in = si.id GROUP BY 1, 2 ORDER BY 1, 2;
-- args (values as displayed: JSON has one integer type)
SELECT CASE WHEN a.key GLOB 'args.*' OR a.key GLOB 'debug.*' THEN substr(a.key, instr(a.key, '.') + 1) ELSE a.key END AS k, count(*), count(DISTINCT a.display_value) FROM args a JOIN slice s ON s.arg_set_id = a.arg_set_id GROUP BY 1 ORDER BY 1;
SELECT s.ts, s.name, group_concat(CASE WHEN a.key GLOB 'args.*' OR a.key GLOB 'debug.*' THEN substr(a.key, instr(a.key, '.') + 1) ELSE a.key END || '=' || coalesce(a.display_value, 'NULL'), ';') AS a FROM slice s JOIN args a USING (arg_set_id) GROUP BY s.id ORDER BY s.ts, s.name, a LIMIT 300;
-- counters
SELECT count(*), sum(value), min(ts), max(ts) FROM counter;
SELECT x.machine, t.name, count(*), sum(c.value), min(c.ts), max(c.ts) FROM counter c JOIN counter_track t ON c.track_id = t.id JOIN xm_track x ON x.id = t.id GROUP BY 1, 2 ORDER BY 1, 2;
-- names
SELECT machine, tid, name FROM xm_thread WHERE name IS NOT NULL AND tid != 0 ORDER BY 1, 2, 3;
SELECT machine, pid, name FROM xm_process WHERE name IS NOT NULL AND pid != 0 ORDER BY 1, 2, 3;

-- slices, by depth, category, machine and thread
SELECT count(DISTINCT name), count(DISTINCT category) FROM slice;
SELECT depth, count(*), sum(dur), min(ts), max(ts) FROM slice GROUP BY 1 ORDER BY 1;
SELECT category, count(*), sum(dur), min(ts), max(ts + dur) FROM slice GROUP BY 1 ORDER BY 1;
SELECT x.machine, s.name, count(*), min(s.ts) FROM slice s JOIN xm_track x ON s.track_id = x.id WHERE s.dur = 0 GROUP BY 1, 2 ORDER BY 1, 2;
SELECT x.machine, x.tid, count(*), sum(s.dur) FROM slice s JOIN thread_track tt ON s.track_id = tt.id JOIN xm_thread x USING (utid) WHERE s.depth = 0 GROUP BY 1, 2 ORDER BY 1, 2;
SELECT count(*), sum(dur) FROM slice WHERE parent_id IS NULL;
SELECT ts, dur, name FROM slice ORDER BY dur DESC, ts, name LIMIT 25;
SELECT x.machine, min(s.ts), max(s.ts + s.dur), count(DISTINCT s.name) FROM slice s JOIN xm_track x ON s.track_id = x.id GROUP BY 1 ORDER BY 1;
SELECT count(*), sum(c.dur), sum(p.dur) FROM slice c JOIN slice p ON c.parent_id = p.id;
SELECT ts, name, depth FROM slice ORDER BY ts, name, depth LIMIT 100;
SELECT x.machine, x.tid, count(DISTINCT s.name) FROM slice s JOIN thread_track tt ON s.track_id = tt.id JOIN xm_thread x USING (utid) GROUP BY 1, 2 ORDER BY 1, 2;
-- flows across machines and depths
SELECT xo.machine, xi.machine, count(*) FROM flow f JOIN slice so ON f.slice_out = so.id JOIN slice si ON f.slice_in = si.id JOIN xm_track xo ON so.track_id = xo.id JOIN xm_track xi ON si.track_id = xi.id GROUP BY 1, 2 ORDER BY 1, 2;
SELECT so.depth, si.depth, count(*) FROM flow f JOIN slice so ON f.slice_out = so.id JOIN slice si ON f.slice_in = si.id GROUP BY 1, 2 ORDER BY 1, 2;
-- args per slice name
SELECT s.name, count(*) FROM slice s JOIN args a USING (arg_set_id) GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 40;
SELECT count(*), count(DISTINCT s.id) FROM args a JOIN slice s USING (arg_set_id);
-- counter values per track name
SELECT t.name, count(*), min(c.value), max(c.value) FROM counter c JOIN counter_track t ON c.track_id = t.id GROUP BY 1 ORDER BY 1;
-- threads and processes with slices, per machine
SELECT x.machine, count(DISTINCT x.tid) FROM slice s JOIN thread_track tt ON s.track_id = tt.id JOIN xm_thread x USING (utid) GROUP BY 1 ORDER BY 1;
SELECT x.machine, count(DISTINCT x.pid) FROM slice s JOIN thread_track tt ON s.track_id = tt.id JOIN thread USING (utid) JOIN xm_process x USING (upid) GROUP BY 1 ORDER BY 1;
