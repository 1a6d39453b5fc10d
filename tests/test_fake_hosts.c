/*
 * The tests' fake hosts keep the ABI's promise (<tracemerge/plugin.h>):
 * every service within struct_size is set, so a reader tested against
 * them may call any service without checking for NULL, as it may on the
 * real host. A fake host that left one out would let a reader's test pass
 * while hiding a call it makes.
 */
#include <glib.h>
#include <stddef.h>
#include <string.h>

#include "fake_host.h"
#include "json_host.h"

/* The names of the unset services of `services`, by their offset (the
 * fields after abi_version are all function pointers). */
static char *unset_services(const tm_host_services *services) {
  GString *unset = g_string_new(NULL);
  size_t first = offsetof(tm_host_services, intern_string);
  typedef void (*service_fn)(void);
  for (size_t at = first; at + sizeof(service_fn) <= services->struct_size;
       at += sizeof(service_fn)) {
    service_fn fn;
    memcpy(&fn, (const char *)services + at, sizeof fn);
    if (!fn)
      g_string_append_printf(unset, " service #%zu (offset %zu)",
                             (at - first) / sizeof(service_fn), at);
  }
  return g_string_free(unset, FALSE);
}

static void assert_every_service_set(const tm_host_services *services,
                                     size_t struct_size) {
  g_assert_cmpuint(services->struct_size, ==, struct_size);
  g_assert_cmpuint(services->abi_version, ==, TM_READER_ABI_VERSION);
  g_autofree char *unset = unset_services(services);
  if (*unset)
    g_error("unset:%s", unset);
}

static void test_the_transcript_host_sets_every_service(void) {
  /* Built from this header: its size covers every service. */
  assert_every_service_set(fake_host_services(), sizeof(tm_host_services));
}

static void test_the_json_log_host_sets_every_service(void) {
  /* A host built before track_async (json_host.h); logging_services is
   * this table with another import_log. */
  assert_every_service_set(&services, offsetof(tm_host_services, track_async));
}

/* The check itself: a table with a service left out is caught. */
static void test_a_table_without_one_service_is_caught(void) {
  tm_host_services missing = *fake_host_services();
  missing.sample = NULL;
  g_autofree char *unset = unset_services(&missing);
  g_autofree char *expected = g_strdup_printf(
      " service #%zu (offset %zu)",
      (offsetof(tm_host_services, sample) - offsetof(tm_host_services, intern_string)) /
          sizeof(void (*)(void)),
      offsetof(tm_host_services, sample));
  g_assert_cmpstr(unset, ==, expected);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/fake-hosts/the-transcript-host-sets-every-service",
                  test_the_transcript_host_sets_every_service);
  g_test_add_func("/fake-hosts/the-json-log-host-sets-every-service",
                  test_the_json_log_host_sets_every_service);
  g_test_add_func("/fake-hosts/a-table-without-one-service-is-caught",
                  test_a_table_without_one_service_is_caught);
  return g_test_run();
}
