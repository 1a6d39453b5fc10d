/*
 * The emitter: one complete Trace Event Format event (a json_event_buf,
 * json_event_buf.h) into host calls, with the lookups it caches (clock,
 * machine, processes, threads, interned strings, async tracks); its P
 * events go to the legacy V8 profiles (json_v8_profile.h).
 */
#ifndef TM_JSON_EVENT_H
#define TM_JSON_EVENT_H

#include <stdbool.h>
#include <stdint.h>

#include <tracemerge/plugin.h>

#include "json_event_buf.h"

typedef struct json_emitter json_emitter;

/* Receives each event the emitter drops as json_tokenizer_failure (with
 * `error`, a short reason) or json_parser_failure (`error` NULL): the
 * reader knows where the event lies in the file and counts or logs it
 * (json_reader.c, event_failure). Called at most once per event but for
 * a counter's non-numeric members, once each. */
typedef void (*json_failure_fn)(void *ctx, const json_event_buf *buf,
                                const char *stat, const char *error);

json_emitter *json_emitter_new(const tm_host_services *services, tm_host *host,
                               json_failure_fn on_failure, void *failure_ctx);
void json_emitter_free(json_emitter *emitter);

/* Turns one complete event into host calls (or a stat when it has to be
 * dropped). */
void json_emitter_emit(json_emitter *emitter, const json_event_buf *buf);

#endif /* TM_JSON_EVENT_H */
