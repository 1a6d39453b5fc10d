/*
 * The model builder: turns the sorter's merged event stream (pass 2) into
 * slice, counter, flow and system rows.
 *
 * It is given what it writes and reads as parameters (the session owns all
 * of it, core/input/import_state.h), so the model stage never includes the
 * session's or the host services' headers.
 */
#ifndef TM_MODEL_BUILDER_H
#define TM_MODEL_BUILDER_H

#include <stdint.h>

#include "model/stats.h"
#include "model/async_tracks.h"
#include "model/model.h"
#include "model/event.h"

/* Borrowed for the builder's life. */
typedef struct tm_model_builder_inputs {
  tm_model *model;
  tm_stats *stats;
  struct tm_async_tracks *async_tracks; /* slots resolved as events come */
  const tm_event_extra *extras;         /* by tm_event.extra; not grown in pass 2 */
  size_t n_extras;                      /* elements of `extras` */
  uint64_t *events_placed;              /* counts every event pushed */
  /* The track id of the overflow twin of thread track `track_id`, made on
   * first use (a JSON complete event that overlaps its track's open one). */
  uint32_t (*overflow_track)(void *ctx, uint32_t track_id);
  void *overflow_ctx;
} tm_model_builder_inputs;

typedef struct tm_model_builder tm_model_builder;
tm_model_builder *model_builder_new(const tm_model_builder_inputs *inputs);
/* Announces an event that will be pushed (every event of the runs about to
 * be merged). Once every announced event naming a 64 KiB region of the
 * extras has been pushed, the region's pages go back to the kernel: the
 * extras are read only while the event naming them is pushed, and at the
 * end of the merge they would otherwise sit beside every model table at
 * the import's peak. An event pushed without being announced must not name
 * an extra (it could release a region too early); events announced and
 * never pushed (dropped) only keep their region. */
void model_builder_expect(tm_model_builder *builder, const tm_event *ev);
/* A tm_sorter_emit: `builder` is the tm_model_builder. */
void model_builder_push(void *builder, const tm_event *ev, uint32_t machine_id,
                        uint32_t trace_id);
void model_builder_free(tm_model_builder *builder);

#endif /* TM_MODEL_BUILDER_H */
