/*
 * The HTTP client (http_client.h) over one reused libcurl easy handle.
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
  CURL *curl;
  char *base_url;
  char *user;
  char *password;
};

/* What one request's callbacks share. */
typedef struct request_state {
  const http_request *request;
  CURL *curl;
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
  client->curl = curl_easy_init();
  client->base_url = g_strdup(base_url);
  client->user = g_strdup(user);
  client->password = g_strdup(password ? password : "");
  return client;
}

void http_client_free(http_client *client) {
  if (!client)
    return;
  if (client->curl)
    curl_easy_cleanup(client->curl);
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

bool http_client_post(http_client *client, const http_request *request,
                      GError **error) {
  CURL *curl = client->curl;
  request_state state = {.request = request, .curl = curl,
                         .error_body = g_string_new(NULL)};
  char curl_message[CURL_ERROR_SIZE] = "";
  struct curl_slist *headers = NULL;
  bool ok = false;
  char *url = g_strconcat(client->base_url, "?",
                          request->query_string ? request->query_string : "",
                          NULL);

  curl_easy_reset(curl);
  curl_easy_setopt(curl, CURLOPT_URL, url);
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_message);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, answer_write);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &state);
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
  headers = curl_slist_append(headers, "Expect:");
  headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
  if (request->body_fn) {
    headers = curl_slist_append(headers, "Transfer-Encoding: chunked");
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, body_read);
    curl_easy_setopt(curl, CURLOPT_READDATA, &state);
  } else {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS,
                     request->body ? request->body : "");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     (curl_off_t)request->body_len);
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

  CURLcode rc = curl_easy_perform(curl);
  if (state.status == 0)
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &state.status);
  if (state.callback_error) {
    g_propagate_error(error, g_steal_pointer(&state.callback_error));
  } else if (state.status != 0 && (state.status < 200 || state.status >= 300)) {
    /* Even if the transfer then broke: the status says more. */
    trim_error_body(state.error_body);
    g_set_error(error, TM_HTTP_ERROR, TM_HTTP_ERROR_STATUS, "HTTP %ld: %s",
                state.status,
                state.error_body->len ? state.error_body->str : "(no message)");
  } else if (rc != CURLE_OK) {
    g_set_error(error, TM_HTTP_ERROR, TM_HTTP_ERROR_TRANSPORT, "%s",
                curl_message[0] ? curl_message : curl_easy_strerror(rc));
  } else {
    ok = true;
  }
  g_clear_error(&state.callback_error);
  curl_slist_free_all(headers);
  g_string_free(state.error_body, TRUE);
  g_free(url);
  return ok;
}
