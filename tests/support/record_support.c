#include "record_support.h"

#include <string.h>
#include <time.h>

#include "e2e_support.h"

char *record_trace(const char *dir, const char *name, const char *config_text, record_body body,
                   void *user) {
  return record_trace_on_clock(dir, name, config_text, TMR_NOW_CLOCK_AUTO, body, user);
}

char *record_trace_on_clock(const char *dir, const char *name, const char *config_text,
                            tmr_now_clock now_clock, record_body body, void *user) {
  char *path = g_build_filename(dir, name, NULL);
  GError *error = NULL;
  tmr_config *config = tmr_config_parse_text(config_text, strlen(config_text), name, &error);
  g_assert_no_error(error);
  tmr_session_options options = {.output_path = path, .producer_name = "record-test",
                                 .now_clock = now_clock};
  tmr_session *session = tmr_session_new(config, &options, &error);
  g_assert_no_error(error);
  g_assert_true(tmr_session_start(session, &error));
  g_assert_no_error(error);
  if (body)
    body(session, user);
  g_assert_true(tmr_session_stop(session, &error));
  g_assert_no_error(error);
  tmr_session_free(session);
  tmr_config_free(config);
  return path;
}

char *record_decode(const char *path) {
  const char *argv[] = {"/bin/sh", "-c",
                        "exec \"$0\" --decode=tracemerge.record.Trace -I \"$1\" "
                        "\"$1/recorded_trace.proto\" < \"$2\"",
                        TM_PROTOC, TM_PROTO_DIR, path, NULL};
  char *out = NULL, *err = NULL;
  int status = 0;
  GError *error = NULL;
  g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
               &error);
  g_assert_no_error(error);
  if (!g_spawn_check_wait_status(status, NULL) || (err && *err))
    g_error("protoc --decode of %s failed: %s", path, err);
  g_free(err);
  return out;
}

guint record_count(const char *haystack, const char *needle) {
  guint n = 0;
  size_t len = strlen(needle);
  for (const char *p = strstr(haystack, needle); p; p = strstr(p + len, needle))
    n++;
  return n;
}

char *record_query(const char *path, const char *sql) {
  const char *inputs[] = {path, NULL};
  return e2e_query(inputs, sql);
}

int64_t record_boottime(void) {
  struct timespec t;
  clock_gettime(CLOCK_BOOTTIME, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* --- packet walk -------------------------------------------------------------- */

typedef struct wire {
  const uint8_t *p, *end;
} wire;

static uint64_t wire_varint(wire *w) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    g_assert_true(w->p < w->end);
    uint8_t b = *w->p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      return v;
  }
  g_assert_not_reached();
}

/* Reads the next field's tag; for a length-delimited field sets `body` to
 * its bytes, for a varint `value`; skips the fixed-width ones. False at
 * the end. */
static gboolean wire_next(wire *w, uint32_t *field, uint64_t *value, wire *body) {
  if (w->p == w->end)
    return FALSE;
  uint64_t tag = wire_varint(w);
  *field = (uint32_t)(tag >> 3);
  switch (tag & 7) {
  case 0:
    *value = wire_varint(w);
    break;
  case 1:
  case 5: {
    size_t n = (tag & 7) == 1 ? 8 : 4;
    g_assert_cmpuint((size_t)(w->end - w->p), >=, n);
    w->p += n;
    break;
  }
  case 2: {
    uint64_t len = wire_varint(w);
    g_assert_cmpuint(len, <=, (uint64_t)(w->end - w->p));
    *body = (wire){w->p, w->p + len};
    w->p += len;
    break;
  }
  default:
    g_error("record_check_clock_order: wire type %u", (unsigned)(tag & 7));
  }
  return TRUE;
}

/* A sequence's state as the walk goes: its default clock (0: none) and
 * which sequence-scoped clocks its generation has related (bit i: 64 + i). */
typedef struct sequence_clocks {
  uint32_t default_clock;
  uint64_t related;
} sequence_clocks;

void record_check_clock_order(const char *path, record_clock_order *out) {
  memset(out, 0, sizeof *out);
  g_autofree char *data = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(path, &data, &len, NULL));
  g_autoptr(GHashTable) sequences = g_hash_table_new_full(NULL, NULL, NULL, g_free);
  wire trace = {(const uint8_t *)data, (const uint8_t *)data + len};
  uint32_t field;
  uint64_t value = 0;
  wire packet = {0};
  while (wire_next(&trace, &field, &value, &packet)) {
    if (field != 1)
      continue;
    out->packets++;
    gboolean has_ts = FALSE, has_clock = FALSE, has_defaults = FALSE, clears = FALSE;
    uint32_t clock = 0, sequence = 0, defaults_clock = 0;
    uint64_t snapshot_clocks = 0;
    wire body = {0};
    while (wire_next(&packet, &field, &value, &body)) {
      if (field == 8) {
        has_ts = TRUE;
      } else if (field == 58) {
        has_clock = TRUE;
        clock = (uint32_t)value;
      } else if (field == 10) {
        sequence = (uint32_t)value;
      } else if ((field == 13 && (value & 1)) || (field == 41 && value)) {
        clears = TRUE; /* SEQ_INCREMENTAL_STATE_CLEARED, or the old bool */
      } else if (field == 11) {
        out->events++;
      } else if (field == 59) {
        has_defaults = TRUE;
        wire d = body, unused;
        uint64_t v = 0;
        while (wire_next(&d, &field, &v, &unused))
          if (field == 58)
            defaults_clock = (uint32_t)v;
      } else if (field == 6) {
        wire snap = body, c;
        uint64_t v = 0;
        while (wire_next(&snap, &field, &v, &c)) {
          if (field != 1)
            continue;
          wire unused;
          while (wire_next(&c, &field, &v, &unused))
            if (field == 1 && v >= 64 && v <= 127)
              snapshot_clocks |= (uint64_t)1 << (v - 64);
        }
      }
    }
    sequence_clocks *seq = g_hash_table_lookup(sequences, GUINT_TO_POINTER(sequence));
    if (!seq) {
      seq = g_new0(sequence_clocks, 1);
      g_hash_table_insert(sequences, GUINT_TO_POINTER(sequence), seq);
    }
    if (clears) {
      out->generations++;
      *seq = (sequence_clocks){0};
    }
    if (has_defaults)
      seq->default_clock = defaults_clock;
    uint32_t on = has_clock ? clock : seq->default_clock;
    if (has_ts && on >= 64 && on <= 127) {
      if (seq->related >> (on - 64) & 1) {
        out->scoped[on - 64]++;
      } else if (out->unrelated++ == 0) {
        g_snprintf(out->first_unrelated, sizeof out->first_unrelated,
                   "packet %u (sequence %u%s) is on clock %u before a snapshot of it",
                   out->packets, sequence, clears ? ", clearing its state" : "", on);
      }
    }
    seq->related |= snapshot_clocks;
  }
}
