/*
 * Legacy V8 CPU profiles in Chrome JSON (`ph: "P"`, reference/formats.md
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
 * Chrome writes trace events out of order: a ProfileChunk may come before
 * its Profile. Such a chunk is kept (its parsed nodes with their names and
 * urls, samples and deltas, not the raw event) and applied when the Profile comes, before any later
 * chunk; one whose Profile never comes is counted at the end of the file.
 *
 * Invariants: a sample's time is startTime + the sum of every delta of its
 * profile's chunks in file order up to and including its own (wherever
 * the Profile event lies), in exact integer µs×1000 on the
 * file's private clock; a node's callsite is built only when its whole
 * chain up to a root is known (a chunk may list a child before its parent,
 * a later chunk may use earlier nodes), and then never changes; the state
 * kept between chunks is, per profile, one entry per distinct node id the
 * file listed, plus the parsed chunks still waiting for their Profile, so
 * it is bounded by the input.
 */
#ifndef TM_JSON_V8_PROFILE_H
#define TM_JSON_V8_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include <tracemerge/plugin.h>

#include "json_event.h"

typedef struct json_v8_profiles json_v8_profiles;

/* NULL on out of memory. */
json_v8_profiles *json_v8_profiles_new(const tm_host_services *services,
                                       tm_host *host);
void json_v8_profiles_free(json_v8_profiles *profiles);

/* One `P` event of process `pid`, whose samples go to `thread` on `clock`.
 * Names other than Profile and ProfileChunk are ignored. Malformed parts
 * are counted in the json_v8_profile_* stats. False only on out of
 * memory. */
bool json_v8_profiles_event(json_v8_profiles *profiles,
                            const json_event_buf *buf, int64_t pid,
                            tm_thread_ref thread, tm_clock_ref clock);

/* The end of the file (or of its reading): counts each chunk still
 * waiting for its Profile as json_v8_profile_unknown_profile and frees
 * it. May be called more than once. */
void json_v8_profiles_end(json_v8_profiles *profiles);

#endif /* TM_JSON_V8_PROFILE_H */
