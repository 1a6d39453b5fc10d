/*
 * libFuzzer target for the container layer (core/input/container): the
 * input is one root file (a memfd, so a ZIP is listed through its central
 * directory as on disk), walked with budgets small enough to keep a run
 * short, into a sink that takes every leaf (but those whose first byte is
 * 0xff, left unknown so the "Unknown trace type" path is fuzzed too) and
 * counts its bytes. Whether the sink stops wanting a leaf early is taken
 * from the input's first byte. Damage and budget cuts are expected.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "input/container.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct counting_sink {
  uint64_t bytes;
  bool stop_early;
} counting_sink;

static const char *detect(void *ctx, const uint8_t *head, size_t len, const char *name) {
  (void)ctx;
  (void)name;
  if (len > 0 && head[0] == 0xff)
    return NULL;
  return len > 0 && head[0] == '{' ? "perfetto_manifest" : "blob";
}

static bool begin(void *ctx, uint32_t id, const char *type, GError **error) {
  (void)ctx, (void)id, (void)type, (void)error;
  return true;
}

static bool chunk(void *ctx, uint32_t id, const uint8_t *bytes, size_t len, GError **error) {
  (void)id, (void)error;
  counting_sink *sink = ctx;
  /* Touch every byte, as a reader would. */
  for (size_t i = 0; i < len; i += 4096)
    sink->bytes += bytes[i];
  sink->bytes += len;
  return true;
}

static bool end(void *ctx, uint32_t id, bool truncated, const char *damage, GError **error) {
  (void)ctx, (void)id, (void)truncated, (void)damage, (void)error;
  return true;
}

static bool damaged(void *ctx, uint32_t id, const char *damage, GError **error) {
  (void)ctx, (void)id, (void)damage, (void)error;
  return true;
}

static void budget_exceeded(void *ctx, uint32_t id, const char *stat) {
  (void)ctx, (void)id, (void)stat;
}

static bool wants_more(void *ctx, uint32_t id) {
  (void)id;
  const counting_sink *sink = ctx;
  return !sink->stop_early || sink->bytes < 4096;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = memfd_create("fuzz-container", MFD_CLOEXEC);
  if (fd < 0)
    return 0;
  size_t written = 0;
  while (written < size) {
    ssize_t n = write(fd, data + written, size - written);
    if (n <= 0)
      break;
    written += (size_t)n;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  counting_sink state = {.stop_early = size > 0 && (data[0] & 1u)};
  tm_container_sink sink = {
      .ctx = &state,
      .detect = detect,
      .begin = begin,
      .chunk = chunk,
      .end = end,
      .container_damaged = damaged,
      .budget_exceeded = budget_exceeded,
      .wants_more = wants_more,
  };
  tm_budgets budgets = {
      .max_inflate_ratio = 100,
      .max_member_bytes = 1 << 20,
      .max_depth = 8,
      .max_files = 64,
  };
  tm_model *model = model_new();
  const char *paths[] = {path};
  GError *error = NULL;
  (void)container_read_inputs(model, paths, 1, &sink, &budgets, &error);
  g_clear_error(&error);
  model_free(model);
  close(fd);
  return 0;
}
