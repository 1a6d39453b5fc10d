/*
 * A small HTTP/1.1 client over libcurl, as much as a sink needs to talk to
 * one server: POST a request whose body is in memory or produced on
 * demand (sent chunked, so nothing is buffered whole), and read the answer
 * as it arrives.
 *
 * Invariants: one client talks to one base URL and keeps its connections
 * alive between requests (up to HTTP_MAX_PARALLEL of them, for requests
 * sent together by http_client_post_all); a request is answered either by
 * the caller's
 * `on_data` (2xx answers, as the bytes arrive) or, for any other status,
 * by an error whose message carries the status and the server's own text
 * (at most HTTP_ERROR_BODY_MAX bytes of it). A client is used from one
 * thread at a time.
 */
#ifndef TM_HTTP_CLIENT_H
#define TM_HTTP_CLIENT_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

#define TM_HTTP_ERROR (tm_http_error_quark())
GQuark tm_http_error_quark(void);

typedef enum tm_http_error_code {
  TM_HTTP_ERROR_TRANSPORT, /* no answer: refused, reset, timed out */
  TM_HTTP_ERROR_STATUS,    /* the server answered with a non-2xx status */
  TM_HTTP_ERROR_ABORTED,   /* a body or answer callback failed */
} tm_http_error_code;

/* How much of an error answer's body is kept for the message. */
#define HTTP_ERROR_BODY_MAX 4096

/* Fills `buf` (capacity `cap` > 0) with the next bytes of a request body;
 * returns how many (0: the body is complete), or -1 to abort the request
 * after setting `error`. */
typedef gssize (*http_body_fn)(void *ctx, char *buf, size_t cap,
                               GError **error);

/* Takes the next bytes of a 2xx answer; false (after setting `error`)
 * aborts the request. */
typedef bool (*http_data_fn)(void *ctx, const char *data, size_t len,
                             GError **error);

typedef struct http_request {
  /* Appended to the base URL after '?': already percent-encoded. */
  const char *query_string;
  /* The body: `body_fn` if set, else `body` (`body_len` bytes, may be 0). */
  http_body_fn body_fn;
  void *body_ctx;
  const char *body;
  size_t body_len;
  /* The answer of a 2xx status; NULL drops it. */
  http_data_fn on_data;
  void *data_ctx;
  /* Whole-request limit in seconds; 0: none. */
  double timeout_seconds;
} http_request;

typedef struct http_client http_client;

/* A client for `base_url` ("http://host:port/"), with HTTP basic
 * credentials when `user` is not NULL (`password` may be NULL). Copies its
 * arguments. */
http_client *http_client_new(const char *base_url, const char *user,
                             const char *password);
void http_client_free(http_client *client);

/* Sends `request` as a POST and reads the whole answer. True for a 2xx
 * status whose answer every callback took. */
bool http_client_post(http_client *client, const http_request *request,
                      GError **error);

/* Connections one client opens at most. */
#define HTTP_MAX_PARALLEL 8

/* Sends the `n` requests, up to `parallel` (1..HTTP_MAX_PARALLEL) at a
 * time, each started as one before it finishes, in order; all run to
 * their end whatever the others do. errors[i] (NULL on entry) is set for
 * each request that failed. True if none did. Callbacks of different
 * requests interleave on the calling thread. */
bool http_client_post_all(http_client *client, const http_request *requests,
                          size_t n, size_t parallel, GError **errors);

/* Percent-encodes `text` for a query string (free with g_free). */
char *http_escape(const char *text);

#endif /* TM_HTTP_CLIENT_H */
