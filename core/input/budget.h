/*
 * Budgets: the defaults of tm_budgets (tracemerge.h) and the stats that
 * say one tripped.
 *
 * Invariant: every field of a filled tm_budgets is non-zero, so code that
 * checks a budget never needs to ask whether one is set.
 */
#ifndef TM_BUDGET_H
#define TM_BUDGET_H

#include <stdint.h>

#include <tracemerge/tracemerge.h>

#define TM_BUDGET_DEFAULT_INFLATE_RATIO 1000u
#define TM_BUDGET_DEFAULT_MEMBER_BYTES ((uint64_t)64 << 30)
#define TM_BUDGET_DEFAULT_DEPTH 16u
#define TM_BUDGET_DEFAULT_FILES 100000u
#define TM_BUDGET_DEFAULT_RECORD_BYTES ((uint64_t)512 << 20)
/* The inflate ratio is judged only past this many bytes yielded: small
 * archives of very compressible data are harmless whatever their ratio. */
#define TM_BUDGET_INFLATE_FLOOR ((uint64_t)64 << 20)

#define TM_STAT_INFLATE_RATIO_EXCEEDED "container_inflate_ratio_exceeded"
#define TM_STAT_MEMBER_SIZE_EXCEEDED "container_member_size_exceeded"
#define TM_STAT_DEPTH_EXCEEDED "container_depth_exceeded"
#define TM_STAT_FILE_COUNT_EXCEEDED "container_file_count_exceeded"
#define TM_STAT_RECORD_SIZE_EXCEEDED "reader_record_size_exceeded"

/* `budgets` (may be NULL) with every zero field replaced by its default. */
static inline tm_budgets budgets_with_defaults(const tm_budgets *budgets) {
  tm_budgets b = budgets != NULL ? *budgets : (tm_budgets){0};
  if (b.max_inflate_ratio == 0)
    b.max_inflate_ratio = TM_BUDGET_DEFAULT_INFLATE_RATIO;
  if (b.max_member_bytes == 0)
    b.max_member_bytes = TM_BUDGET_DEFAULT_MEMBER_BYTES;
  if (b.max_depth == 0)
    b.max_depth = TM_BUDGET_DEFAULT_DEPTH;
  if (b.max_files == 0)
    b.max_files = TM_BUDGET_DEFAULT_FILES;
  if (b.max_record_bytes == 0)
    b.max_record_bytes = TM_BUDGET_DEFAULT_RECORD_BYTES;
  return b;
}

#endif /* TM_BUDGET_H */
