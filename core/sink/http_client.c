/*
 * The HTTP client (http_client.h) over libcurl: one multi handle driving
 * a pool of easy handles, each reused (with its connection) request after
 * request.
 *
 * A body produced on demand goes out with "Transfer-Encoding: chunked":
 * libcurl pulls it through body_read() as the socket drains, so the
 * producer's buffer is all that is held. The status is known before the
 * first answer byte reaches answer_write() (libcurl parses the headers
 * first): a 2xx answer flows to the caller, any other is kept (bounded)
 * for the error message.
 *
 * libcurl is not linked: it is dlopened (its soname, libcurl.so.4) when
 * the first client is made, so that an import, which never talks HTTP,
 * does not load curl's TLS, Kerberos and LDAP libraries (about 2 MB of
 * resident pages in every process). A client made without it fails each
 * request with the loader's message.
 */
#include "sink/http_client.h"

#include <dlfcn.h>
#include <string.h>

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

/* A test builds this file with another soname, to see a client without
 * libcurl fail each request (tests/test_http_client_without_curl.c). */
#ifndef CURL_SONAME
#define CURL_SONAME "libcurl.so.4"
#endif

/* The libcurl functions this file calls, resolved once by load_curl(). */
static struct {
  CURLcode (*global_init)(long);
  CURLM *(*multi_init)(void);
  CURLMcode (*multi_cleanup)(CURLM *);
  CURLMcode (*multi_add_handle)(CURLM *, CURL *);
  CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
  CURLMcode (*multi_perform)(CURLM *, int *);
  CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd[], unsigned int, int,
                          int *);
  CURLMsg *(*multi_info_read)(CURLM *, int *);
  const char *(*multi_strerror)(CURLMcode);
  CURL *(*easy_init)(void);
  void (*easy_cleanup)(CURL *);
  void (*easy_reset)(CURL *);
  CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
  CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
  const char *(*easy_strerror)(CURLcode);
  struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
  void (*slist_free_all)(struct curl_slist *);
} curl_api;
static char *curl_load_error; /* why libcurl could not be loaded, or NULL */

/* curl.h defines these two as function-like macros of themselves. */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init curl_api.global_init
#define curl_multi_init curl_api.multi_init
#define curl_multi_cleanup curl_api.multi_cleanup
#define curl_multi_add_handle curl_api.multi_add_handle
#define curl_multi_remove_handle curl_api.multi_remove_handle
#define curl_multi_perform curl_api.multi_perform
#define curl_multi_poll curl_api.multi_poll
#define curl_multi_info_read curl_api.multi_info_read
#define curl_multi_strerror curl_api.multi_strerror
#define curl_easy_init curl_api.easy_init
#define curl_easy_cleanup curl_api.easy_cleanup
#define curl_easy_reset curl_api.easy_reset
#define curl_easy_setopt curl_api.easy_setopt
#define curl_easy_getinfo curl_api.easy_getinfo
#define curl_easy_strerror curl_api.easy_strerror
#define curl_slist_append curl_api.slist_append
#define curl_slist_free_all curl_api.slist_free_all

G_DEFINE_QUARK(tm-http-error-quark, tm_http_error)

struct http_client {
  CURLM *multi;
  CURL *easy[HTTP_MAX_PARALLEL]; /* made on first use */
  char *base_url;
  char *user;
  char *password;
};

/* One request in flight: what its callbacks share. */
typedef struct request_state {
  const http_request *request;
  CURL *curl;
  char *url;
  struct curl_slist *headers;
  char curl_message[CURL_ERROR_SIZE];
  long status;          /* 0 until the first answer byte */
  GString *error_body;  /* a non-2xx answer, bounded */
  GError *callback_error; /* why a callback aborted */
} request_state;

/* Loads libcurl and resolves curl_api (all of it, or curl_load_error). */
static gpointer load_curl(gpointer data) {
  (void)data;
  void *handle = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *why = dlerror();
    curl_load_error = g_strdup_printf("cannot load %s: %s", CURL_SONAME,
                                      why ? why : "unknown dlopen error");
    return NULL;
  }
  /* POSIX guarantees a function address survives the void* round trip. */
#define RESOLVE(field, symbol)                                                 \
  do {                                                                         \
    *(void **)&curl_api.field = dlsym(handle, symbol);                         \
    if (curl_api.field == NULL && curl_load_error == NULL)                     \
      curl_load_error =                                                        \
          g_strdup_printf("%s has no %s", CURL_SONAME, symbol);                \
  } while (0)
  RESOLVE(global_init, "curl_global_init");
  RESOLVE(multi_init, "curl_multi_init");
  RESOLVE(multi_cleanup, "curl_multi_cleanup");
  RESOLVE(multi_add_handle, "curl_multi_add_handle");
  RESOLVE(multi_remove_handle, "curl_multi_remove_handle");
  RESOLVE(multi_perform, "curl_multi_perform");
  RESOLVE(multi_poll, "curl_multi_poll");
  RESOLVE(multi_info_read, "curl_multi_info_read");
  RESOLVE(multi_strerror, "curl_multi_strerror");
  RESOLVE(easy_init, "curl_easy_init");
  RESOLVE(easy_cleanup, "curl_easy_cleanup");
  RESOLVE(easy_reset, "curl_easy_reset");
  RESOLVE(easy_setopt, "curl_easy_setopt");
  RESOLVE(easy_getinfo, "curl_easy_getinfo");
  RESOLVE(easy_strerror, "curl_easy_strerror");
  RESOLVE(slist_append, "curl_slist_append");
  RESOLVE(slist_free_all, "curl_slist_free_all");
#undef RESOLVE
  if (curl_load_error == NULL)
    curl_global_init(CURL_GLOBAL_DEFAULT);
  /* The handle stays open: libcurl is needed until the process ends. */
  return NULL;
}

http_client *http_client_new(const char *base_url, const char *user,
                             const char *password) {
  static GOnce once = G_ONCE_INIT;
  g_once(&once, load_curl, NULL);
  http_client *client = g_new0(http_client, 1);
  if (curl_load_error == NULL)
    client->multi = curl_multi_init();
  client->base_url = g_strdup(base_url);
  client->user = g_strdup(user);
  client->password = g_strdup(password ? password : "");
  return client;
}

void http_client_free(http_client *client) {
  if (!client)
    return;
  for (size_t i = 0; i < HTTP_MAX_PARALLEL; i++)
    if (client->easy[i])
      curl_easy_cleanup(client->easy[i]);
  if (client->multi)
    curl_multi_cleanup(client->multi);
  g_free(client->base_url);
  g_free(client->user);
  if (client->password)
    memset(client->password, 0, strlen(client->password));
  g_free(client->password);
  g_free(client);
}

char *http_escape(const char *text) {
  return g_uri_escape_string(text, NULL, FALSE);
}

static size_t body_read(char *buf, size_t size, size_t nitems, void *data) {
  request_state *state = data;
  const http_request *request = state->request;
  gssize n = request->body_fn(request->body_ctx, buf, size * nitems,
                              &state->callback_error);
  if (n < 0) {
    if (!state->callback_error)
      g_set_error(&state->callback_error, TM_HTTP_ERROR, TM_HTTP_ERROR_ABORTED,
                  "the request body could not be produced");
    return CURL_READFUNC_ABORT;
  }
  return (size_t)n;
}

static size_t answer_write(char *data, size_t size, size_t nmemb, void *ctx) {
  request_state *state = ctx;
  size_t len = size * nmemb;
  if (state->status == 0)
    curl_easy_getinfo(state->curl, CURLINFO_RESPONSE_CODE, &state->status);
  if (state->status < 200 || state->status >= 300) {
    size_t room = HTTP_ERROR_BODY_MAX - MIN(state->error_body->len,
                                            (size_t)HTTP_ERROR_BODY_MAX);
    g_string_append_len(state->error_body, data, (gssize)MIN(len, room));
    return len;
  }
  const http_request *request = state->request;
  if (request->on_data &&
      !request->on_data(request->data_ctx, data, len, &state->callback_error)) {
    if (!state->callback_error)
      g_set_error(&state->callback_error, TM_HTTP_ERROR, TM_HTTP_ERROR_ABORTED,
                  "the answer could not be taken");
    return 0; /* CURLE_WRITE_ERROR */
  }
  return len;
}

/* The server's error text on one line: trailing blanks dropped. */
static void trim_error_body(GString *body) {
  while (body->len > 0 && g_ascii_isspace(body->str[body->len - 1]))
    g_string_truncate(body, body->len - 1);
}

/* Sets up `curl` for `state->request`. */
static void prepare(http_client *client, CURL *curl, request_state *state) {
  const http_request *request = state->request;
  state->curl = curl;
  state->error_body = g_string_new(NULL);
  state->url = g_strconcat(client->base_url, "?",
                           request->query_string ? request->query_string : "",
                           NULL);
  curl_easy_reset(curl);
  curl_easy_setopt(curl, CURLOPT_URL, state->url);
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, state->curl_message);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, answer_write);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, state);
  curl_easy_setopt(curl, CURLOPT_PRIVATE, state);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  /* A dead server mid-answer is noticed, not waited for forever. */
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  if (request->timeout_seconds > 0)
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                     (long)(request->timeout_seconds * 1000.0) + 1L);
  if (client->user) {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
    curl_easy_setopt(curl, CURLOPT_USERNAME, client->user);
    curl_easy_setopt(curl, CURLOPT_PASSWORD, client->password);
  }
  /* No "Expect: 100-continue" round trip before each body. */
  state->headers = curl_slist_append(NULL, "Expect:");
  state->headers = curl_slist_append(state->headers,
                                     "Content-Type: application/octet-stream");
  if (request->body_fn) {
    state->headers = curl_slist_append(state->headers,
                                       "Transfer-Encoding: chunked");
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, body_read);
    curl_easy_setopt(curl, CURLOPT_READDATA, state);
  } else {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS,
                     request->body ? request->body : "");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     (curl_off_t)request->body_len);
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, state->headers);
}

/* The outcome of a finished request; releases what prepare() made. */
static bool finish(request_state *state, CURLcode rc, GError **error) {
  bool ok = false;
  if (state->status == 0)
    curl_easy_getinfo(state->curl, CURLINFO_RESPONSE_CODE, &state->status);
  if (state->callback_error) {
    g_propagate_error(error, g_steal_pointer(&state->callback_error));
  } else if (state->status != 0 &&
             (state->status < 200 || state->status >= 300)) {
    /* Even if the transfer then broke: the status says more. */
    trim_error_body(state->error_body);
    g_set_error(error, TM_HTTP_ERROR, TM_HTTP_ERROR_STATUS, "HTTP %ld: %s",
                state->status,
                state->error_body->len ? state->error_body->str
                                       : "(no message)");
  } else if (rc != CURLE_OK) {
    g_set_error(error, TM_HTTP_ERROR, TM_HTTP_ERROR_TRANSPORT, "%s",
                state->curl_message[0] ? state->curl_message
                                       : curl_easy_strerror(rc));
  } else {
    ok = true;
  }
  curl_easy_setopt(state->curl, CURLOPT_ERRORBUFFER, NULL);
  g_clear_error(&state->callback_error);
  curl_slist_free_all(state->headers);
  g_string_free(state->error_body, TRUE);
  g_free(state->url);
  return ok;
}

bool http_client_post_all(http_client *client, const http_request *requests,
                          size_t n, size_t parallel, GError **errors) {
  if (client->multi == NULL) {
    /* libcurl could not be loaded (or its multi handle not made). */
    for (size_t i = 0; i < n; i++)
      g_set_error(&errors[i], TM_HTTP_ERROR, TM_HTTP_ERROR_TRANSPORT, "%s",
                  curl_load_error ? curl_load_error
                                  : "cannot make a libcurl multi handle");
    return false;
  }
  parallel = CLAMP(parallel, (size_t)1, (size_t)HTTP_MAX_PARALLEL);
  request_state *states = g_new0(request_state, n + 1);
  bool idle[HTTP_MAX_PARALLEL];
  size_t next = 0, running = 0;
  bool all_ok = true;
  for (size_t i = 0; i < parallel; i++) {
    idle[i] = true;
    if (!client->easy[i])
      client->easy[i] = curl_easy_init();
  }
  while (next < n || running > 0) {
    for (size_t slot = 0; slot < parallel && next < n; slot++) {
      if (!idle[slot])
        continue;
      states[next].request = &requests[next];
      prepare(client, client->easy[slot], &states[next]);
      curl_multi_add_handle(client->multi, client->easy[slot]);
      idle[slot] = false;
      next++;
      running++;
    }
    int still_running = 0;
    CURLMcode mc = curl_multi_perform(client->multi, &still_running);
    if (mc == CURLM_OK && still_running > 0)
      mc = curl_multi_poll(client->multi, NULL, 0, 1000, NULL);
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(client->multi, &left))) {
      if (msg->msg != CURLMSG_DONE)
        continue;
      CURL *curl = msg->easy_handle;
      CURLcode rc = msg->data.result;
      request_state *state = NULL;
      curl_easy_getinfo(curl, CURLINFO_PRIVATE, (char **)&state);
      curl_multi_remove_handle(client->multi, curl);
      size_t index = (size_t)(state - states);
      all_ok = finish(state, rc, &errors[index]) && all_ok;
      for (size_t slot = 0; slot < parallel; slot++)
        if (client->easy[slot] == curl)
          idle[slot] = true;
      running--;
    }
    if (mc != CURLM_OK) {
      /* The multi handle itself failed (out of memory): end what runs. */
      for (size_t slot = 0; slot < parallel; slot++) {
        if (idle[slot])
          continue;
        CURL *curl = client->easy[slot];
        request_state *state = NULL;
        curl_easy_getinfo(curl, CURLINFO_PRIVATE, (char **)&state);
        curl_multi_remove_handle(client->multi, curl);
        snprintf(state->curl_message, sizeof state->curl_message, "%s",
                 curl_multi_strerror(mc));
        finish(state, CURLE_FAILED_INIT, &errors[state - states]);
        idle[slot] = true;
        running--;
      }
      for (; next < n; next++)
        g_set_error(&errors[next], TM_HTTP_ERROR, TM_HTTP_ERROR_TRANSPORT,
                    "%s", curl_multi_strerror(mc));
      all_ok = false;
    }
  }
  g_free(states);
  return all_ok;
}

bool http_client_post(http_client *client, const http_request *request,
                      GError **error) {
  GError *errors[1] = {NULL};
  bool ok = http_client_post_all(client, request, 1, 1, errors);
  if (!ok)
    g_propagate_error(error, errors[0]);
  return ok;
}
