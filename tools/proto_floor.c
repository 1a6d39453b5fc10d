#include "proto_floor.h"

#include <stdio.h>
#include <stdlib.h>

#include "proto_framing.h"
#include "proto_wire_decode.h"

typedef struct floor_counts {
  uint64_t packets;
  uint64_t fields;
} floor_counts;

/* Decodes every field of a message and, to `depth` levels, of the
 * length-delimited fields in it, as a reader that looks at everything. */
static bool walk_message(const uint8_t *data, size_t len, int depth,
                         floor_counts *counts) {
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  while (pw_next(&c, &f)) {
    counts->fields++;
    if (depth > 0 && f.wire_type == PW_LENGTH_DELIMITED)
      (void)walk_message(f.data, f.len, depth - 1, counts); /* strings fail fast */
  }
  return c.error == PW_OK;
}

/* An ftrace bundle: every event's fields and its payload's, and every
 * value of the packed compact_sched arrays. */
static void walk_bundle(const uint8_t *data, size_t len, floor_counts *counts) {
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  while (pw_next(&c, &f)) {
    counts->fields++;
    if (f.wire_type != PW_LENGTH_DELIMITED)
      continue;
    if (f.number == 2) {
      (void)walk_message(f.data, f.len, 1, counts);
    } else if (f.number == 4) {
      pw_cursor a = pw_cursor_of(f.data, f.len);
      pw_field array;
      while (pw_next(&a, &array)) {
        counts->fields++;
        if (array.number == 5 || array.wire_type != PW_LENGTH_DELIMITED)
          continue; /* comms: strings */
        pw_repeated r = pw_repeated_of(&array, false);
        uint64_t v;
        while (pw_repeated_next(&r, &v))
          counts->fields++;
      }
    }
  }
}

static bool on_packet(void *ctx, const uint8_t *data, size_t len, uint64_t offset) {
  (void)offset;
  floor_counts *counts = ctx;
  counts->packets++;
  pw_cursor c = pw_cursor_of(data, len);
  pw_field f;
  while (pw_next(&c, &f)) {
    counts->fields++;
    /* track_event, interned_data, track_descriptor, clock_snapshot */
    if (f.wire_type == PW_LENGTH_DELIMITED &&
        (f.number == 11 || f.number == 12 || f.number == 60 || f.number == 6))
      (void)walk_message(f.data, f.len, 2, counts);
    else if (f.wire_type == PW_LENGTH_DELIMITED && f.number == 1)
      walk_bundle(f.data, f.len, counts); /* ftrace_events */
  }
  return c.error == PW_OK;
}

bool proto_floor_walk_file(const char *path, uint64_t *packets, uint64_t *fields) {
  FILE *in = fopen(path, "rb");
  if (!in)
    return false;
  floor_counts counts = {0, 0};
  proto_framer framer;
  proto_framer_init(&framer, PROTO_DEFAULT_MAX_PACKET, on_packet, &counts);
  enum { CHUNK = 256 * 1024 };
  uint8_t *buf = malloc(CHUNK);
  bool ok = buf != NULL;
  size_t n;
  while (ok && (n = fread(buf, 1, CHUNK, in)) > 0)
    ok = proto_framer_feed(&framer, buf, n);
  ok = ok && !ferror(in) && proto_framer_finish(&framer);
  proto_framer_clear(&framer);
  free(buf);
  fclose(in);
  *packets = counts.packets;
  *fields = counts.fields;
  return ok;
}
