#include "record_support.h"

#include <string.h>
#include <time.h>

#include "e2e_support.h"
#include "proto_wire_decode.h"

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

/* The walk reads fields with the proto reader's own cursor
 * (plugins/proto/proto_wire_decode.h); `msg` names the message in the
 * failure when the file is not well-formed protobuf. */
static void assert_walked_whole(const pw_cursor *c, const char *msg) {
  if (c->error != PW_OK)
    g_error("record_check_clock_order: %s at byte %zu: %s", msg, (size_t)(c->p - c->start),
            pw_error_message(c->error));
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
  pw_cursor trace = pw_cursor_of((const uint8_t *)data, len);
  pw_field f;
  while (pw_next(&trace, &f)) {
    if (f.number != 1 || f.wire_type != PW_LENGTH_DELIMITED)
      continue;
    out->packets++;
    gboolean has_ts = FALSE, has_clock = FALSE, has_defaults = FALSE, clears = FALSE;
    uint32_t clock = 0, sequence = 0, defaults_clock = 0;
    uint64_t snapshot_clocks = 0;
    pw_cursor packet = pw_cursor_of(f.data, f.len);
    pw_field p;
    while (pw_next(&packet, &p)) {
      if (p.number == 8) {
        has_ts = TRUE;
      } else if (p.number == 58) {
        has_clock = TRUE;
        clock = (uint32_t)p.value;
      } else if (p.number == 10) {
        sequence = (uint32_t)p.value;
      } else if ((p.number == 13 && (p.value & 1)) || (p.number == 41 && p.value)) {
        clears = TRUE; /* SEQ_INCREMENTAL_STATE_CLEARED, or the old bool */
      } else if (p.number == 11) {
        out->events++;
      } else if (p.number == 59) {
        has_defaults = TRUE;
        pw_cursor d = pw_cursor_of(p.data, p.len);
        pw_field df;
        while (pw_next(&d, &df))
          if (df.number == 58)
            defaults_clock = (uint32_t)df.value;
        assert_walked_whole(&d, "TracePacketDefaults");
      } else if (p.number == 6) {
        pw_cursor snap = pw_cursor_of(p.data, p.len);
        pw_field sf;
        while (pw_next(&snap, &sf)) {
          if (sf.number != 1 || sf.wire_type != PW_LENGTH_DELIMITED)
            continue;
          pw_cursor c = pw_cursor_of(sf.data, sf.len);
          pw_field cf;
          while (pw_next(&c, &cf))
            if (cf.number == 1 && cf.value >= 64 && cf.value <= 127)
              snapshot_clocks |= (uint64_t)1 << (cf.value - 64);
          assert_walked_whole(&c, "ClockSnapshot.Clock");
        }
        assert_walked_whole(&snap, "ClockSnapshot");
      }
    }
    assert_walked_whole(&packet, "TracePacket");
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
  assert_walked_whole(&trace, "Trace");
}
