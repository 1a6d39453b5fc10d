-- Views naming machines, processes, threads and tracks by machine name on a
-- merge (the JSON export's import has its own: json_prelude_export.sql).
CREATE TEMP VIEW xm_machine AS SELECT id AS idx, coalesce(name, 'machine ' || id) AS name FROM machine;
CREATE TEMP VIEW xm_process AS SELECT p.upid, m.name AS machine, p.pid, p.name FROM process p JOIN xm_machine m ON p.machine_id = m.idx;
CREATE TEMP VIEW xm_thread AS SELECT t.utid, m.name AS machine, t.tid, t.name FROM thread t JOIN xm_machine m ON t.machine_id = m.idx;
CREATE TEMP VIEW xm_track AS SELECT t.id, m.name AS machine FROM track t JOIN xm_machine m ON t.machine_id = m.idx;
