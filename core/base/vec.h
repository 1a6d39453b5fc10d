/*
 * Typed growable arrays: the project's one vector type, for the host's
 * tables and event runs and for the readers' buffers (plugins/proto links
 * it through plugins/meson.build's plugin_vec_dep).
 *
 * Invariant: data[0..len) are initialised, cap >= len, and data is either
 * NULL (cap == 0) or a g_malloc'd block of cap elements. Growth doubles, so
 * appends are amortised O(1). A vector owns its block; tm_vec_free releases
 * it and leaves the vector empty and reusable.
 *
 * Out of memory is fatal, as in GLib: growth aborts (g_realloc, or
 * g_error for a size that overflows) instead of returning an error that
 * every caller would have to pass up.
 *
 * The readers use it too (plugins/json's NUL-terminated json_text is a
 * TM_VEC(char)), so the project has one growable array and one policy.
 */
#ifndef TM_VEC_H
#define TM_VEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TM_VEC(T)                                                           \
  struct {                                                                  \
    T *data;                                                                \
    size_t len;                                                             \
    size_t cap;                                                             \
  }

/* Asks the kernel to back a large block with transparent huge pages. For
 * blocks written in scattered order (the sorter's side tables), where
 * 4 KiB pages would cost a TLB miss at most writes. Not for tables
 * appended front to back (vectors, event runs): a huge page is zeroed
 * whole at its first touch, 2 MiB that leave the cache before the rows
 * are written into them, so every line crosses the memory bus three
 * times; on 4 KiB pages the zeroed lines are still cached when written
 * (ftrace 5M events: 0.51 -> 0.32 s of system time, 95.5k faults for
 * 13.9k; docs/performance.md). A no-op for blocks under 4 MiB or where
 * the kernel says no. */
void tm_memory_advise_huge(void *block, size_t bytes);

/* Hands the whole pages of the bytes [from, to) of the g_malloc'd `block`
 * back to the kernel (they read as zeros afterwards); pages only partly in
 * the range stay, and so does the block's first page: the allocator's
 * bookkeeping lives before the block and, once it is freed, at its start.
 * `from` may lie before the block. For a block whose front is read for the
 * last time while the import's tables still grow. */
void tm_memory_release(const void *block, uintptr_t from, uintptr_t to);

/* Bytes a table appended front to back has populated ahead of its end. */
#define TM_POPULATE_STEP ((size_t)64 << 10)

/* Populates (MADV_POPULATE_WRITE: zeroed pages mapped in one call) the
 * whole pages of the block's bytes [from, from + TM_POPULATE_STEP) that
 * lie inside its first `block_bytes` bytes. A no-op where the kernel
 * lacks it. */
void tm_memory_populate_(const void *block, size_t block_bytes, size_t from);

/* For a table appended front to back, after an append that ended at byte
 * `end` of its block of `block_bytes`: once the end crosses into a new
 * step of TM_POPULATE_STEP bytes, the step after it is populated, so that
 * the table's pages come 16 to a call instead of a page fault each (on
 * this VM, 1.3 us a fault; 64 KiB steps stay in L2 until they are
 * written). `elem` is the size of one append. */
static inline void tm_memory_populate_ahead(const void *block, size_t block_bytes,
                                            size_t end, size_t elem) {
  if (__builtin_expect(end % TM_POPULATE_STEP < elem, 0))
    tm_memory_populate_(block, block_bytes, end - end % TM_POPULATE_STEP + TM_POPULATE_STEP);
}

/* tm_vec_push for a large table appended front to back, its pages
 * populated ahead (tm_memory_populate_ahead). */
#define tm_vec_push_populated(v, x)                                         \
  do {                                                                      \
    tm_vec_push((v), (x));                                                  \
    tm_memory_populate_ahead((v)->data, (v)->cap * sizeof(*(v)->data),     \
                             (v)->len * sizeof(*(v)->data), sizeof(*(v)->data)); \
  } while (0)

/* Grows *data so that it holds at least `need` elements of `elem_size`. */
void tm_vec_reserve_(void **data, size_t *cap, size_t need, size_t elem_size);

/* Frees a vector's block (g_free; out of line so that this header needs
 * no GLib, and its users none of GLib's system headers). */
void tm_vec_release_(void *data);

/* The capacity is checked inline: most reserves need no growth, and the
 * call alone was most of their cost in the readers' per-event paths. */
#define tm_vec_reserve(v, n)                                                \
  ((size_t)(n) > (v)->cap                                                   \
       ? tm_vec_reserve_((void **)&(v)->data, &(v)->cap, (n), sizeof(*(v)->data)) \
       : (void)0)

/* Grows *data to exactly `need` elements when it holds fewer: for a table
 * whose final size is known (the model's slices once every event is read),
 * where the doubling's power of two would map up to twice the rows. Later
 * pushes double from there as usual. */
void tm_vec_reserve_exact_(void **data, size_t *cap, size_t need, size_t elem_size);

#define tm_vec_reserve_exact(v, n)                                          \
  tm_vec_reserve_exact_((void **)&(v)->data, &(v)->cap, (n), sizeof(*(v)->data))

#define tm_vec_push(v, x)                                                   \
  do {                                                                      \
    if ((v)->len == (v)->cap)                                               \
      tm_vec_reserve((v), (v)->len + 1);                                    \
    (v)->data[(v)->len++] = (x);                                            \
  } while (0)

/* Appends one zeroed element and returns a pointer to it. */
#define tm_vec_push_zero(v)                                                 \
  ((v)->len == (v)->cap ? tm_vec_reserve((v), (v)->len + 1) : (void)0,      \
   memset(&(v)->data[(v)->len], 0, sizeof(*(v)->data)),                     \
   &(v)->data[(v)->len++])

#define tm_vec_free(v)                                                      \
  do {                                                                      \
    tm_vec_release_((v)->data);                                             \
    (v)->data = NULL;                                                       \
    (v)->len = (v)->cap = 0;                                                \
  } while (0)

/* Sentinel for a NULL reference in uint32 id columns. */
#define TM_NULL_ID UINT32_MAX

#endif /* TM_VEC_H */
