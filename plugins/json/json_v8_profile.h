/*
 * Legacy V8 CPU profiles in Chrome JSON (`ph: "P"`, docs/formats.md
 * §2.3) to the host's profiling services: a `Profile` event opens a
 * profile (its args.data.startTime, keyed by pid and "id"), each
 * `ProfileChunk` with the same pid and id adds nodes
 * (args.data.cpuProfile.nodes) and samples (args.data.cpuProfile.samples,
 * args.data.timeDeltas) to it.
 *
 * The event arrives as the reader's flattened args ("args.data.cpuProfile
 * .nodes[3].callFrame.url"), so both of the reader's paths (yajl and the
 * fast tokenizer) reach here through the same json_event_buf and cannot
 * disagree.
 *
 * P events are read in file order, as trace_processor reads them while
 * tokenizing: a ProfileChunk that comes before its Profile (Chrome writes
 * trace events out of order) is dropped and counted, as upstream drops it.
 *
 * Invariants: a sample's time is startTime + the sum of every delta of its
 * profile's chunks in file order up to and including its own, in exact
 * integer µs×1000 on the
 * file's private clock; a node's callsite is built only when its whole
 * chain up to a root is known (a chunk may list a child before its parent,
 * a later chunk may use earlier nodes), and then never changes; the state
 * kept between chunks is, per profile, one entry per distinct node id the
 * file listed, so it is bounded by the input.
 */
#ifndef TM_JSON_V8_PROFILE_H
#define TM_JSON_V8_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include <tracemerge/plugin.h>

#include "json_event_buf.h"

typedef struct json_v8_profiles json_v8_profiles;

json_v8_profiles *json_v8_profiles_new(const tm_host_services *services,
                                       tm_host *host);
void json_v8_profiles_free(json_v8_profiles *profiles);

/* The thread a P event's samples go to, resolved (made, if new) only when
 * the event has a sample to emit. */
typedef struct json_v8_thread {
  tm_thread_ref (*resolve)(void *ctx);
  void *ctx;
} json_v8_thread;

/* One `P` event of process `pid`, whose samples go to `thread` on `clock`.
 * Names other than Profile and ProfileChunk are ignored. Malformed parts
 * are counted in the json_v8_profile_* stats. */
void json_v8_profiles_event(json_v8_profiles *profiles,
                            const json_event_buf *buf, int64_t pid,
                            const json_v8_thread *thread, tm_clock_ref clock);

#endif /* TM_JSON_V8_PROFILE_H */
