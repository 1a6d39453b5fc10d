/*
 * The tests' one fake host (tests/support/fake_host.h) keeps the ABI's
 * promise (<tracemerge/plugin.h>): every service within struct_size is
 * set, whether it offers the whole table or one cut to an older host's
 * size (as the JSON reader's tests use it), so a reader tested against it
 * may call any service without checking for NULL, as it may on the real
 * host. A fake host that left one out would let a reader's test pass
 * while hiding a call it makes. The real host's version-2 table is
 * checked the same way.
 */
#include <glib.h>
#include <stddef.h>
#include <string.h>

#include "fake_host.h"
#include "input/host_services.h"

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

static void test_the_host_cut_to_an_older_table_sets_every_service_in_it(void) {
  /* The size of a host built before track_async, which the JSON reader's
   * tests use (tests/support/json_run.h); what lies past it is NULL, as
   * an older host has no such field to call. */
  const size_t older = offsetof(tm_host_services, track_async);
  fake_host *fake = fake_host_new();
  fake_host_set_services_size(fake, older);
  const tm_host_services *cut = fake_host_table(fake);
  assert_every_service_set(cut, older);
  for (size_t at = older; at < sizeof *cut; at++)
    g_assert_cmpint(((const char *)cut)[at], ==, 0);
  fake_host_free(fake);
}

static void test_the_host_opens_readers_with_the_table_it_offers(void) {
  /* Uncut, the table a reader gets is the whole one. */
  fake_host *fake = fake_host_new();
  g_assert_true(memcmp(fake_host_table(fake), fake_host_services(),
                       sizeof(tm_host_services)) == 0);
  fake_host_free(fake);
}

/* The promise is the real host's first (core/input/host_services.c): the
 * fake only mirrors it. */
static void test_the_real_host_sets_every_service(void) {
  assert_every_service_set(&host_services_v2, sizeof(tm_host_services));
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
  g_test_add_func("/fake-hosts/the-host-cut-to-an-older-table-sets-every-service-in-it",
                  test_the_host_cut_to_an_older_table_sets_every_service_in_it);
  g_test_add_func("/fake-hosts/the-host-opens-readers-with-the-table-it-offers",
                  test_the_host_opens_readers_with_the_table_it_offers);
  g_test_add_func("/fake-hosts/the-real-host-sets-every-service",
                  test_the_real_host_sets_every_service);
  g_test_add_func("/fake-hosts/a-table-without-one-service-is-caught",
                  test_a_table_without_one_service_is_caught);
  return g_test_run();
}
