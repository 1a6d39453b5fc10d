-- The same views on the import of a JSON export, read back from the
-- mapping of docs/exports.md: machine m's pid P and tid T are m * S + P and
-- m * S + T (S, the stride, is @STRIDE@ here); process m * S is named after
-- the machine, every other process "<machine>: <name>".
CREATE TEMP VIEW xm_machine AS SELECT pid / @STRIDE@ AS idx, CASE WHEN instr(name, ': ') > 0 THEN substr(name, 1, instr(name, ': ') - 1) ELSE name END AS name FROM process WHERE pid % @STRIDE@ = 0 AND name IS NOT NULL;
CREATE TEMP VIEW xm_process AS SELECT p.upid, m.name AS machine, p.pid % @STRIDE@ AS pid, CASE WHEN instr(p.name, ': ') > 0 THEN substr(p.name, instr(p.name, ': ') + 2) ELSE NULL END AS name FROM process p JOIN xm_machine m ON m.idx = p.pid / @STRIDE@;
CREATE TEMP VIEW xm_thread AS SELECT t.utid, m.name AS machine, t.tid % @STRIDE@ AS tid, t.name FROM thread t JOIN xm_machine m ON m.idx = t.tid / @STRIDE@;
CREATE TEMP VIEW xm_track AS SELECT t.id, m.name AS machine FROM track t LEFT JOIN thread_track tt USING (id) LEFT JOIN thread th ON th.utid = tt.utid LEFT JOIN process_track pt ON pt.id = t.id LEFT JOIN process p ON p.upid = coalesce(pt.upid, th.upid) JOIN xm_machine m ON m.idx = coalesce(p.pid, th.tid, 0) / @STRIDE@;
