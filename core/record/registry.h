/*
 * The process-wide registries of the recording library: categories,
 * tracks (with their encoded TrackDescriptors), source locations,
 * mappings, frames and callstacks. Each entry gets a small index, which
 * writers use to remember, per incremental-state generation, what they
 * have emitted (an array indexed by it, no hashing on the hot path).
 *
 * Entries are added under one lock and never move or go away (paged
 * storage), so a thread that holds an index reads its entry without a
 * lock. Memory grows with the number of distinct things registered, which
 * the API asks to be bounded (static categories and locations, long-lived
 * tracks); each registry has a hard cap past which registration fails.
 */
#ifndef TMR_REGISTRY_H
#define TMR_REGISTRY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracemerge/record.h"

#define TMR_REG_PAGE_SIZE 256u
#define TMR_REG_MAX_PAGES 4096u /* at most 1,048,576 entries per registry */

/* An immutable blob: an encoded message body. */
typedef struct tmr_blob {
  size_t len;
  uint8_t data[];
} tmr_blob;

typedef struct tmr_track_entry {
  uint64_t uuid;
  uint32_t parent; /* index, 0: none */
  /* The TrackDescriptor body. Replaced (never freed) when a thread is
   * renamed; `version` counts replacements. */
  _Atomic(const tmr_blob *) descriptor;
  _Atomic uint32_t version;
} tmr_track_entry;

typedef struct tmr_srcloc_entry {
  char *file_name;
  char *function_name;
  uint32_t line_number;
} tmr_srcloc_entry;

typedef struct tmr_mapping_entry {
  char *build_id; /* NULL: none */
  char *path;     /* NULL: none */
  uint64_t start, end, exact_offset, load_bias;
} tmr_mapping_entry;

typedef struct tmr_frame_entry {
  char *function_name;
  uint32_t mapping; /* 0: none */
  uint64_t rel_pc;
} tmr_frame_entry;

typedef struct tmr_callstack_entry {
  uint32_t n_frames;
  const uint32_t *frames; /* frame indexes, outermost first */
} tmr_callstack_entry;

/* Indexes start at 1; 0 is "none". */
const tmr_track_entry *tmr_reg_track(uint32_t index);
const tmr_srcloc_entry *tmr_reg_srcloc(uint32_t index);
const tmr_mapping_entry *tmr_reg_mapping(uint32_t index);
const tmr_frame_entry *tmr_reg_frame(uint32_t index);
const tmr_callstack_entry *tmr_reg_callstack(uint32_t index);

/* The process' identity: pid, name (from /proc/self/comm, else the GLib
 * program name), and its track (index 1). */
int64_t tmr_reg_pid(void);
const char *tmr_reg_process_name(void);
uint32_t tmr_reg_process_track(void);

/* The calling thread's track (a thread TrackDescriptor), created on first
 * use. */
uint32_t tmr_reg_thread_track(void);
/* Replaces the calling thread's descriptor with one naming it `name`. */
void tmr_reg_rename_thread(const char *name);
int64_t tmr_reg_tid(void);

/* A source location's index, registered on first use (0 if full). */
uint32_t tmr_reg_srcloc_index(tmr_source_location *loc);

/* Registers a category on first use; returns its index (>= 1). Its state
 * is set from `decide`, the current filter (see tmr_reg_apply_categories). */
uint32_t tmr_reg_category_index(tmr_category *category);

/* The category filter: returns whether a category is enabled now. */
typedef bool (*tmr_category_filter)(void *user, const tmr_category *category);
/* Sets every registered category's state with `filter` (NULL: all
 * disabled) and remembers it for categories registered later. */
void tmr_reg_apply_categories(tmr_category_filter filter, void *user);

/* Counts, for writers sizing their emission arrays. */
uint32_t tmr_reg_count_categories(void);

#endif /* TMR_REGISTRY_H */
