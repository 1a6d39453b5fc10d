/*
 * A reader built only for the plugin loader's tests, compiled into several
 * variants by tests/plugins/meson.build. Good variants differ by name and
 * by the score their probe gives to heads starting with TEST_READER_PREFIX;
 * broken variants each carry exactly one defect the loader must reject:
 * TEST_READER_NO_ENTRY (no entry symbol), TEST_READER_NULL_DESCRIPTOR,
 * TEST_READER_ABI_MIN / TEST_READER_ABI (an ABI range this host does not
 * speak), TEST_READER_STRUCT_SIZE (a descriptor too small),
 * TEST_READER_SAMPLE_TABLE (a table the host lacks), TEST_READER_BAD_STAT
 * (a stat without a valid severity), TEST_READER_NAME NULL, or
 * TEST_READER_MISSING_<CALLBACK> (that callback NULL). TEST_READER_FUTURE
 * builds a good one as a later version would: a larger descriptor that
 * still works with version 2; TEST_READER_SHORT_STAT declares its stats
 * as version 2 first did, without flags. The callbacks are never fed: the loader
 * only loads and probes.
 */
#include <string.h>

#include <tracemerge/plugin.h>

#ifndef TEST_READER_ABI
#define TEST_READER_ABI TM_READER_ABI_VERSION
#endif
#ifndef TEST_READER_ABI_MIN
#define TEST_READER_ABI_MIN TM_READER_ABI_VERSION
#endif
#ifndef TEST_READER_STRUCT_SIZE
#define TEST_READER_STRUCT_SIZE sizeof(tm_reader_descriptor)
#endif
#ifndef TEST_READER_SAMPLE_TABLE
#define TEST_READER_SAMPLE_TABLE NULL
#endif
#ifndef TEST_READER_PREFIX
#define TEST_READER_PREFIX "#tm-test"
#endif
#ifndef TEST_READER_SCORE
#define TEST_READER_SCORE 5
#endif

/* A variant leaves one callback out of its descriptor. */
#define TEST_MAYBE_UNUSED __attribute__((unused))

TEST_MAYBE_UNUSED static int test_probe(const uint8_t *head, size_t len,
                                        const char *file_name) {
  (void)file_name;
  size_t prefix_len = strlen(TEST_READER_PREFIX);
  /* The ABI promises at most 512 bytes; a longer head is a host bug. */
  if (len > 512 || len < prefix_len)
    return 0;
  return memcmp(head, TEST_READER_PREFIX, prefix_len) == 0 ? TEST_READER_SCORE
                                                           : 0;
}

TEST_MAYBE_UNUSED static void *test_open(const tm_host_services *services,
                                         tm_host *host, const uint8_t *config,
                                         size_t config_len) {
  (void)services;
  (void)host;
  (void)config;
  (void)config_len;
  return NULL;
}

TEST_MAYBE_UNUSED static tm_status test_feed(void *state, const uint8_t *data,
                                             size_t len) {
  (void)state;
  (void)data;
  (void)len;
  return TM_OK;
}

TEST_MAYBE_UNUSED static tm_status test_finish(void *state) {
  (void)state;
  return TM_OK;
}

TEST_MAYBE_UNUSED static void test_close(void *state) { (void)state; }

#ifdef TEST_READER_MISSING_PROBE
#define test_probe NULL
#endif
#ifdef TEST_READER_MISSING_OPEN
#define test_open NULL
#endif
#ifdef TEST_READER_MISSING_FEED
#define test_feed NULL
#endif
#ifdef TEST_READER_MISSING_FINISH
#define test_finish NULL
#endif
#ifdef TEST_READER_MISSING_CLOSE
#define test_close NULL
#endif

#ifdef TEST_READER_SHORT_STAT
/* Stat declarations as the first release of version 2 laid them out: no
 * flags after the description. */
typedef struct {
  uint32_t struct_size, severity, source;
  const char *name;
  const char *description;
} test_short_stat;

static const test_short_stat test_short_stats[] = {
    {sizeof(test_short_stat), TM_STAT_NOTICE, TM_STAT_SOURCE_ANALYSIS,
     "test_reader_short_first", "The first of two short declarations."},
    {sizeof(test_short_stat), TM_STAT_ERROR, TM_STAT_SOURCE_TRACE,
     "test_reader_short_second", "The second of two short declarations."},
};
#define test_stats ((const tm_reader_stat *)test_short_stats)
#define TEST_READER_N_STATS 2
#else
static const tm_reader_stat test_stats[] = {
#ifdef TEST_READER_BAD_STAT
    TM_READER_STAT("test_reader_bad_severity", 99, TM_STAT_SOURCE_TRACE,
                   "A severity no host knows."),
#else
    TM_READER_STAT("test_reader_stat", TM_STAT_NOTICE, TM_STAT_SOURCE_ANALYSIS,
                   "A stat the loader test reader declares."),
#endif
};
#define TEST_READER_N_STATS (sizeof test_stats / sizeof test_stats[0])
#endif

/* A later version's descriptor: version 2's fields, then one more. */
static const struct {
  tm_reader_descriptor v2;
  uint64_t added_later;
} test_descriptor_with_more = {
    .v2 =
        {
            .struct_size =
#ifdef TEST_READER_FUTURE
                sizeof test_descriptor_with_more,
#else
                TEST_READER_STRUCT_SIZE,
#endif
            .abi_version = TEST_READER_ABI,
            .abi_min = TEST_READER_ABI_MIN,
            .name = TEST_READER_NAME,
            .description = "loader test reader",
            .probe = test_probe,
            .open = test_open,
            .feed = test_feed,
            .finish = test_finish,
            .close = test_close,
            .stats = test_stats,
            .n_stats = TEST_READER_N_STATS,
            .sample_table = TEST_READER_SAMPLE_TABLE,
        },
    .added_later = UINT64_MAX,
};

#define test_descriptor test_descriptor_with_more.v2

#if defined(TEST_READER_NO_ENTRY)
/* Exported under another name: the object loads but has no entry. */
TM_READER_EXPORT const tm_reader_descriptor *tracemerge_reader_entry_v0(void) {
  return &test_descriptor;
}
#elif defined(TEST_READER_NULL_DESCRIPTOR)
TM_READER_EXPORT const tm_reader_descriptor *tracemerge_reader_entry(void) {
  (void)test_descriptor;
  return NULL;
}
#else
TM_READER_EXPORT const tm_reader_descriptor *tracemerge_reader_entry(void) {
  return &test_descriptor;
}
#endif
