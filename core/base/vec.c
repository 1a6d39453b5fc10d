#include "base/vec.h"

#include <errno.h>
#include <glib.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGE_PAGE ((size_t)2 << 20)

void tm_memory_advise_huge(void *block, size_t bytes) {
#ifdef MADV_HUGEPAGE
  if (bytes < 2 * HUGE_PAGE)
    return;
  /* Advise the whole mapping, page-aligned at both ends: advising only part
   * of it would split the mapping, and glibc's realloc can then no longer
   * move it with mremap but copies it. */
  uintptr_t page = 4096;
  uintptr_t from = (uintptr_t)block & ~(page - 1);
  uintptr_t to = ((uintptr_t)block + bytes + page - 1) & ~(page - 1);
  (void)madvise((void *)from, to - from, MADV_HUGEPAGE);
#else
  (void)block;
  (void)bytes;
#endif
}

void tm_memory_release(const void *block, uintptr_t from, uintptr_t to) {
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  from = MAX(from, (uintptr_t)block + page);
  from = (from + page - 1) & ~(page - 1);
  to &= ~(page - 1);
  if (to > from)
    madvise((void *)from, to - from, MADV_DONTNEED);
}

void tm_memory_populate_(const void *block, size_t block_bytes, size_t from) {
#ifdef MADV_POPULATE_WRITE
  static int unsupported; /* read and set atomically: two threads import */
  if (__atomic_load_n(&unsupported, __ATOMIC_RELAXED) || from >= block_bytes)
    return;
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t start = ((uintptr_t)block + from + page - 1) & ~(page - 1);
  uintptr_t end = ((uintptr_t)block + MIN(block_bytes, from + TM_POPULATE_STEP)) & ~(page - 1);
  if (end > start && madvise((void *)start, end - start, MADV_POPULATE_WRITE) != 0 &&
      errno == EINVAL)
    __atomic_store_n(&unsupported, 1, __ATOMIC_RELAXED);
#else
  (void)block;
  (void)block_bytes;
  (void)from;
#endif
}

void tm_vec_reserve_(void **data, size_t *cap, size_t need, size_t elem_size) {
  if (need <= *cap)
    return;
  /* The first block holds 4: many vectors stay tiny (a file's clock
   * placements, one per clock it uses), and an archive of many small
   * members keeps one of those per member. */
  size_t new_cap = *cap ? *cap : 4;
  while (new_cap < need) {
    if (new_cap > SIZE_MAX / 2 / elem_size)
      g_error("tracemerge: vector of %zu elements of %zu bytes is too large",
              need, elem_size);
    new_cap *= 2;
  }
  *data = g_realloc(*data, new_cap * elem_size);
  *cap = new_cap;
}

void tm_vec_reserve_exact_(void **data, size_t *cap, size_t need, size_t elem_size) {
  if (need <= *cap)
    return;
  if (need > SIZE_MAX / elem_size)
    g_error("tracemerge: vector of %zu elements of %zu bytes is too large", need,
            elem_size);
  *data = g_realloc(*data, need * elem_size);
  *cap = need;
}

void tm_vec_release_(void *data) { g_free(data); }
