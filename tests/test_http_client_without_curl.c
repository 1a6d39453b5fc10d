/*
 * The HTTP client where libcurl cannot be loaded. This file is built with
 * core/sink/http_client.c compiled for a soname no system has, so the
 * dlopen that a real client does when it is first made fails here as it
 * would on a machine without libcurl.so.4: the client is still made, and
 * every request fails with the loader's reason instead of crashing.
 */
#include <glib.h>
#include <string.h>

#include "sink/http_client.h"

/* CURL_SONAME: the soname meson gives this test's copy of http_client.c
 * (tests/meson.build), a library no system has. */

static void test_a_request_fails_naming_the_library_it_could_not_load(void) {
  http_client *client = http_client_new("http://127.0.0.1:9/", "user", "pw");
  g_assert_nonnull(client);
  http_request request = {.body = "SELECT 1", .body_len = 8};
  GError *error = NULL;
  g_assert_false(http_client_post(client, &request, &error));
  g_assert_error(error, TM_HTTP_ERROR, TM_HTTP_ERROR_TRANSPORT);
  g_assert_nonnull(strstr(error->message, "cannot load " CURL_SONAME));
  g_clear_error(&error);
  http_client_free(client);
}

static void test_every_request_of_a_batch_fails_alike(void) {
  http_client *client = http_client_new("http://127.0.0.1:9/", NULL, NULL);
  http_request requests[3] = {{.body = "a", .body_len = 1},
                              {.body = "b", .body_len = 1},
                              {.body = "c", .body_len = 1}};
  GError *errors[3] = {NULL, NULL, NULL};
  g_assert_false(http_client_post_all(client, requests, 3, 2, errors));
  for (int i = 0; i < 3; i++) {
    g_assert_error(errors[i], TM_HTTP_ERROR, TM_HTTP_ERROR_TRANSPORT);
    g_assert_nonnull(strstr(errors[i]->message, CURL_SONAME));
    g_clear_error(&errors[i]);
  }
  http_client_free(client);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/http-client/without-curl/a-request-fails-naming-the-library-it-could-not-load",
                  test_a_request_fails_naming_the_library_it_could_not_load);
  g_test_add_func("/http-client/without-curl/every-request-of-a-batch-fails-alike",
                  test_every_request_of_a_batch_fails_alike);
  return g_test_run();
}
