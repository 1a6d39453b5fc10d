-- The prelude: included on every connection before anything else.
-- Written for tracemerge from the public description of trace_processor's
-- prelude macros.

-- Casts an expression to an integer (SQLite INT affinity).
CREATE PERFETTO MACRO cast_int(value Expr)
RETURNS Expr AS CAST($value AS INT);

-- Casts an expression to a double.
CREATE PERFETTO MACRO cast_double(value Expr)
RETURNS Expr AS CAST($value AS REAL);

-- Casts an expression to a string.
CREATE PERFETTO MACRO cast_string(value Expr)
RETURNS Expr AS CAST($value AS TEXT);

-- Whether slice ancestor_id is an ancestor of slice descendant_id: on the
-- same track, shallower, and its span (unfinished: dur -1) contains the
-- other's. NULL if either id is not a slice.
CREATE PERFETTO FUNCTION slice_is_ancestor(ancestor_id LONG, descendant_id LONG)
RETURNS BOOL AS
SELECT a.track_id = d.track_id AND a.depth < d.depth AND a.ts <= d.ts
       AND (a.dur = -1 OR a.ts + a.dur >= d.ts + d.dur)
FROM slice a, slice d
WHERE a.id = $ancestor_id AND d.id = $descendant_id;
