/*
 * trace_processor's slice and flow table functions as SQLite eponymous
 * virtual tables over the model (nothing materialised):
 *
 *   ancestor_slice(id)               the slices enclosing slice `id`
 *   descendant_slice(id)             the slices nested under it
 *   ancestor_slice_by_stack(stack)   every slice whose stack hash is
 *                                    `stack`, and their ancestors
 *   descendant_slice_by_stack(stack) the same, and their descendants
 *   following_flow(id)               flows reached from `id` along outgoing
 *                                    flows and down into children
 *   preceding_flow(id)               flows reached along incoming flows and
 *                                    up to parents
 *   directly_connected_flow(id)      flows reached along flows alone, both
 *                                    directions
 *
 * Slice functions return the columns of the `slice` view; flow functions
 * those of `flow`; rows in increasing id. The argument is the hidden
 * column `start_id` (`start_stack_id` for the *_by_stack ones), so both
 * `ancestor_slice(5)` and `JOIN ancestor_slice(s.id)` work. Each call
 * walks only the rows it returns, through the CSR indexes of
 * model_index.h (built once per connection).
 */
#ifndef TM_SLICE_FUNCTIONS_H
#define TM_SLICE_FUNCTIONS_H

typedef struct sqlite3 sqlite3;
typedef struct tm_model_index tm_model_index;

/* `index` is borrowed and must outlive the connection. Returns an SQLite
 * result code. */
int slice_functions_register(sqlite3 *db, tm_model_index *index);

#endif /* TM_SLICE_FUNCTIONS_H */
