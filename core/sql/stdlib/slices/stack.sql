-- Stack ids of slices. Written for tracemerge from the public
-- documentation of the trace_processor module of the same name.
--
-- stack_id is HASH of the '|'-joined HASH(coalesce(category, '') || '|' ||
-- name) of the slice and its ancestors, root first; parent_stack_id is
-- the parent's, 0 without a parent. tracemerge computes both in C (the
-- same formula, model_index.c); ancestor_slice_by_stack and
-- descendant_slice_by_stack are built in and take these ids.

CREATE PERFETTO VIEW slice_with_stack_id(
  id LONG, ts TIMESTAMP, dur LONG, track_id LONG, category STRING,
  name STRING, depth LONG, parent_id LONG, arg_set_id LONG,
  thread_ts TIMESTAMP, thread_dur LONG, thread_instruction_count LONG,
  thread_instruction_delta LONG, stack_id LONG, parent_stack_id LONG
) AS
SELECT id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id,
       thread_ts, thread_dur, thread_instruction_count,
       thread_instruction_delta,
       __intrinsic_slice_stack_id(id) AS stack_id,
       coalesce(__intrinsic_slice_stack_id(parent_id), 0) AS parent_stack_id
FROM slice;
