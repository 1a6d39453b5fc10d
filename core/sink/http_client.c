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
 */
#include "sink/http_client.h"

#include <curl/curl.h>
#include <string.h>

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

static gpointer global_init(gpointer data) {
  (void)data;
  curl_global_init(CURL_GLOBAL_DEFAULT);
  return NULL;
}

http_client *http_client_new(const char *base_url, const char *user,
                             const char *password) {
  static GOnce once = G_ONCE_INIT;
  g_once(&once, global_init, NULL);
  http_client *client = g_new0(http_client, 1);
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
