/*
 * Synthetic Perfetto protobuf trace for the benchmark: many packet
 * sequences, each a thread writing nested TrackEvent slices with interned
 * names, categories and debug-annotation names, as the Perfetto SDK does.
 *
 * Shape (deterministic for a seed): one ClockSnapshot (BOOTTIME, MONOTONIC)
 * first; then per sequence a first packet that clears incremental state,
 * interns NAMES event names, CATEGORIES categories and one annotation name,
 * and describes the sequence's thread track; then events round-robin over
 * the sequences in blocks, each a SLICE_BEGIN (interned name and category,
 * one interned debug annotation) or SLICE_END, nesting at most 4 deep,
 * timestamps increasing per sequence. Every event packet is one counted
 * event.
 */
#include "gen_proto_trace.h"

#include "proto_wire_append.h"

#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>

enum { NAMES = 128, CATEGORIES = 12, BLOCK = 64, MAX_DEPTH = 4 };

bool gen_proto_trace_write(FILE *out, uint64_t events, uint32_t sequences,
                           uint32_t seed, uint64_t *bytes_written) {
  g_autoptr(GByteArray) packet = g_byte_array_new();
  g_autoptr(GByteArray) frame = g_byte_array_new();
  g_autoptr(GByteArray) sub = g_byte_array_new();
  g_autoptr(GByteArray) sub2 = g_byte_array_new();
  GRand *rand = g_rand_new_with_seed(seed);
  uint64_t *ts = g_new0(uint64_t, sequences);
  uint32_t *depth = g_new0(uint32_t, sequences);
  bool ok = true;
  long start = ftell(out);

  /* ClockSnapshot (field 6): BOOTTIME and MONOTONIC read together. */
  for (int c = 0; c < 2; c++) {
    g_byte_array_set_size(sub2, 0);
    wire_append_uint(sub2, 1, c == 0 ? 6 : 3);
    wire_append_uint(sub2, 2, c == 0 ? 5000000000ull : 4000000000ull);
    wire_append_message(sub, 1, sub2);
  }
  wire_append_uint(packet, 10, 1);
  wire_append_message(packet, 6, sub);
  ok = ok && wire_write_trace_packet(out, frame, packet);

  for (uint32_t s = 0; s < sequences && ok; s++) {
    ts[s] = 5000000000ull + s * 7;
    wire_append_uint(packet, 10, s + 1);   /* trusted_packet_sequence_id */
    wire_append_uint(packet, 13, 1);       /* SEQ_INCREMENTAL_STATE_CLEARED */
    g_byte_array_set_size(sub, 0); /* InternedData (12) */
    for (uint32_t i = 1; i <= NAMES; i++) {
      char name[48];
      g_snprintf(name, sizeof name, "Task::Run/%u/step-%u", s % 16, i);
      wire_append_interned(sub, 2, i, name); /* event_names */
    }
    for (uint32_t i = 1; i <= CATEGORIES; i++) {
      char name[24];
      g_snprintf(name, sizeof name, "category%u", i);
      wire_append_interned(sub, 1, i, name); /* event_categories */
    }
    wire_append_interned(sub, 3, 1, "bytes"); /* debug_annotation_names */
    wire_append_message(packet, 12, sub);
    /* TrackDescriptor (60): uuid, thread {pid, tid}. */
    g_byte_array_set_size(sub, 0);
    wire_append_uint(sub, 1, 1000 + s);
    g_byte_array_set_size(sub2, 0);
    wire_append_uint(sub2, 1, 100 + s % 8);
    wire_append_uint(sub2, 2, 1000 + s);
    wire_append_message(sub, 4, sub2);
    wire_append_message(packet, 60, sub);
    ok = wire_write_trace_packet(out, frame, packet);
  }

  uint64_t emitted = 0;
  while (emitted < events && ok) {
    for (uint32_t s = 0; s < sequences && emitted < events && ok; s++) {
      for (int k = 0; k < BLOCK && emitted < events && ok; k++, emitted++) {
        ts[s] += 50 + g_rand_int_range(rand, 0, 400);
        bool begin = depth[s] == 0 ||
                     (depth[s] < MAX_DEPTH && g_rand_boolean(rand));
        wire_append_uint(packet, 8, ts[s]);      /* timestamp */
        wire_append_uint(packet, 10, s + 1);
        wire_append_uint(packet, 13, 2);         /* SEQ_NEEDS_INCREMENTAL_STATE */
        g_byte_array_set_size(sub, 0);   /* TrackEvent (11) */
        wire_append_uint(sub, 9, begin ? 1 : 2); /* type */
        wire_append_uint(sub, 11, 1000 + s);     /* track_uuid */
        if (begin) {
          wire_append_uint(sub, 10, 1 + (uint64_t)g_rand_int_range(rand, 0, NAMES));
          wire_append_uint(sub, 3, 1 + (uint64_t)g_rand_int_range(rand, 0, CATEGORIES));
          g_byte_array_set_size(sub2, 0); /* DebugAnnotation: name_iid, int */
          wire_append_uint(sub2, 1, 1);
          wire_append_uint(sub2, 4, (uint64_t)g_rand_int_range(rand, 0, 65536));
          wire_append_message(sub, 4, sub2);
          depth[s]++;
        } else {
          depth[s]--;
        }
        wire_append_message(packet, 11, sub);
        ok = wire_write_trace_packet(out, frame, packet);
      }
    }
  }
  g_free(ts);
  g_free(depth);
  g_rand_free(rand);
  if (bytes_written)
    *bytes_written = (uint64_t)(ftell(out) - start);
  return ok && fflush(out) == 0;
}

#ifdef GEN_PROTO_TRACE_MAIN
int main(int argc, char **argv) {
  gint64 events = 5000000;
  gint sequences = 64, seed = 1;
  gboolean realistic = FALSE;
  char *output = NULL; /* owned: GOption hands out a copy */
  GOptionEntry entries[] = {
      {"realistic", 'r', 0, G_OPTION_ARG_NONE, &realistic,
       "the realistic shape (see gen_proto_trace.h); default: the friendly one", NULL},
      {"events", 'n', 0, G_OPTION_ARG_INT64, &events, "TrackEvent packets (default 5000000)", "N"},
      {"sequences", 'q', 0, G_OPTION_ARG_INT, &sequences, "packet sequences (default 64)", "N"},
      {"seed", 's', 0, G_OPTION_ARG_INT, &seed, "random seed (default 1)", "S"},
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "output file", "FILE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionContext *context = g_option_context_new("- write a synthetic Perfetto trace");
  g_option_context_add_main_entries(context, entries, NULL);
  GError *error = NULL;
  if (!g_option_context_parse(context, &argc, &argv, &error) || !output ||
      events < 0 || sequences < 1) {
    fprintf(stderr, "gen_proto_trace: %s\n", error ? error->message : "need -o FILE, N >= 0, sequences >= 1");
    g_option_context_free(context);
    return 2;
  }
  g_option_context_free(context);
  FILE *out = fopen(output, "wb");
  if (!out) {
    fprintf(stderr, "gen_proto_trace: %s: %s\n", output, g_strerror(errno));
    g_free(output);
    return 1;
  }
  uint64_t bytes = 0;
  bool ok = realistic ? gen_proto_trace_write_realistic(out, (uint64_t)events, (uint32_t)sequences,
                                                        (uint32_t)seed, &bytes)
                      : gen_proto_trace_write(out, (uint64_t)events, (uint32_t)sequences,
                                              (uint32_t)seed, &bytes);
  ok = fclose(out) == 0 && ok;
  if (ok)
    printf("%s: %" G_GINT64_FORMAT " events, %" G_GUINT64_FORMAT " bytes\n", output, events, bytes);
  else
    fprintf(stderr, "gen_proto_trace: %s: write failed\n", output);
  g_free(output);
  return ok ? 0 : 1;
}
#endif
