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
