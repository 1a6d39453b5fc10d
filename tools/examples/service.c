/*
 * A small multi-threaded service, traced with tracemerge's recording
 * library (<tracemerge/record.h>).
 *
 *   record_service OUTPUT.pftrace [CONFIG.pbtx]
 *
 * The main thread "accepts" requests and queues them; a pool of workers
 * handles them. What the trace shows:
 * - per thread, nested slices (accept, handle > parse > query), with
 *   debug annotations (request id, path, a dict of headers);
 * - each request's journey as a flow: accept → handle → reply, the reply
 *   ending it (terminating_flow_ids);
 * - each request also as an async slice on one of a few "Requests" lane
 *   tracks under the process: begun by the acceptor, ended by the worker
 *   on another thread;
 * - counters: queue depth (integers) and load (doubles);
 * - categories: "net" and "db" are on by default; "verbose" carries the
 *   "debug" tag, so it is off unless the config enables that tag
 *   (config/service.pbtx does).
 * Without CONFIG, a 4 MiB ring buffer with the track_event data source.
 */
#include <glib.h>
#include <stdio.h>
#include <tracemerge/record.h>

#define WORKERS 3
#define REQUESTS 24
#define LANES 4

static tmr_category cat_net = TMR_CATEGORY("net", NULL);
static tmr_category cat_db = TMR_CATEGORY("db", NULL);
static tmr_category cat_verbose = TMR_CATEGORY("verbose", "debug");

typedef struct request {
  int id;
  const char *path;
  tmr_track lane;
} request;

static GAsyncQueue *queue;
static tmr_track queue_depth, load, lanes[LANES];

static void handle(request *r) {
  tmr_writer *w = tmr_this_thread();
  uint64_t flow = (uint64_t)r->id + 1;
  tmr_arg args[] = {TMR_ARG_INT("request", r->id)};
  tmr_event_extras in = {.args = args, .n_args = 1, .flow_ids = &flow, .n_flow_ids = 1};
  tmr_event(w, TMR_SLICE_BEGIN, TMR_THREAD_TRACK, &cat_net, "handle", TMR_NOW, &in);
  tmr_slice_begin(w, TMR_THREAD_TRACK, &cat_net, "parse", TMR_NOW);
  g_usleep(200);
  tmr_slice_end(w, TMR_THREAD_TRACK, &cat_net, TMR_NOW);
  tmr_slice_begin(w, TMR_THREAD_TRACK, &cat_db, "query", TMR_NOW);
  tmr_instant(w, TMR_THREAD_TRACK, &cat_verbose, "cache miss", TMR_NOW);
  g_usleep(500 + 100 * (r->id % 5));
  tmr_slice_end(w, TMR_THREAD_TRACK, &cat_db, TMR_NOW);
  tmr_slice_end(w, TMR_THREAD_TRACK, &cat_net, TMR_NOW);
  tmr_event_extras out = {.terminating_flow_ids = &flow, .n_terminating_flow_ids = 1};
  tmr_event(w, TMR_INSTANT, TMR_THREAD_TRACK, &cat_net, "reply", TMR_NOW, &out);
  /* The async slice the acceptor began ends here, on this thread. */
  tmr_slice_end(w, r->lane, &cat_net, TMR_NOW);
  g_free(r);
}

static gpointer worker(gpointer data) {
  tmr_writer *w = tmr_this_thread();
  g_autofree char *name = g_strdup_printf("worker %d", GPOINTER_TO_INT(data));
  tmr_writer_set_thread_name(w, name);
  for (;;) {
    request *r = g_async_queue_pop(queue);
    if (r->id < 0) {
      g_free(r);
      return NULL;
    }
    tmr_counter_int(w, queue_depth, &cat_net, TMR_NOW, g_async_queue_length(queue));
    handle(r);
  }
}

static void serve(void) {
  tmr_writer *w = tmr_this_thread();
  tmr_writer_set_thread_name(w, "acceptor");
  static const char *const paths[] = {"/index.html", "/api/items", "/api/user"};
  for (int id = 0; id < REQUESTS; id++) {
    request *r = g_new0(request, 1);
    r->id = id;
    r->path = paths[id % 3];
    r->lane = lanes[id % LANES];
    uint64_t flow = (uint64_t)id + 1;
    tmr_arg headers[] = {TMR_ARG_STRING("host", "example.org"), TMR_ARG_INT("length", 40 * id)};
    tmr_arg args[] = {TMR_ARG_INT("request", id), TMR_ARG_STRING("path", r->path),
                      TMR_ARG_DICT("headers", headers, 2)};
    tmr_event_extras x = {.args = args, .n_args = 3, .flow_ids = &flow, .n_flow_ids = 1,
                          .correlation_id = flow};
    tmr_event(w, TMR_SLICE_BEGIN, TMR_THREAD_TRACK, &cat_net, "accept", TMR_NOW, &x);
    tmr_slice_begin(w, r->lane, &cat_net, r->path, TMR_NOW);
    g_async_queue_push(queue, r);
    tmr_slice_end(w, TMR_THREAD_TRACK, &cat_net, TMR_NOW);
    tmr_counter_int(w, queue_depth, &cat_net, TMR_NOW, g_async_queue_length(queue));
    tmr_counter_double(w, load, &cat_net, TMR_NOW, 0.25 * (id % 4));
    g_usleep(300);
  }
  for (int k = 0; k < WORKERS; k++) {
    request *stop = g_new0(request, 1);
    stop->id = -1;
    g_async_queue_push(queue, stop);
  }
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s OUTPUT.pftrace [CONFIG.pbtx]\n", argv[0]);
    return 2;
  }
  GError *error = NULL;
  tmr_config *config = argc == 3 ? tmr_config_load(argv[2], TMR_CONFIG_AUTO, &error)
                                 : tmr_config_new_default();
  if (!config) {
    fprintf(stderr, "%s\n", error->message);
    return 1;
  }
  for (size_t i = 0; i < tmr_config_note_count(config); i++)
    fprintf(stderr, "note: %s\n", tmr_config_borrow_note(config, i));
  tmr_session_options options = {.output_path = argv[1], .producer_name = "record_service"};
  tmr_session *session = tmr_session_new(config, &options, &error);
  if (!session || !tmr_session_start(session, &error)) {
    fprintf(stderr, "%s\n", error->message);
    return 1;
  }

  /* Tracks: counters and async lanes under this process' track. */
  tmr_track process = tmr_process_track();
  queue_depth = tmr_track_create(&(tmr_track_desc){
      .name = "queue depth", .parent = process, .is_counter = true, .unit = TMR_UNIT_COUNT});
  load = tmr_track_create(&(tmr_track_desc){.name = "load", .parent = process, .is_counter = true});
  tmr_track requests = tmr_track_create(&(tmr_track_desc){
      .name = "Requests", .parent = process, .description = "requests in flight, one per lane",
      .child_ordering = TMR_CHILD_ORDERING_EXPLICIT});
  for (int i = 0; i < LANES; i++) {
    g_autofree char *name = g_strdup_printf("lane %d", i);
    lanes[i] = tmr_track_create(&(tmr_track_desc){.name = name, .parent = requests,
                                                  .has_sibling_order_rank = true,
                                                  .sibling_order_rank = i});
  }

  queue = g_async_queue_new();
  GThread *threads[WORKERS];
  for (int k = 0; k < WORKERS; k++)
    threads[k] = g_thread_new("worker", worker, GINT_TO_POINTER(k));
  serve();
  for (int k = 0; k < WORKERS; k++)
    g_thread_join(threads[k]);
  g_async_queue_unref(queue);

  bool ok = tmr_session_stop(session, &error);
  if (!ok)
    fprintf(stderr, "%s\n", error->message);
  else
    printf("%s: %" G_GUINT64_FORMAT " bytes\n", argv[1], tmr_session_bytes_written(session));
  tmr_session_free(session);
  tmr_config_free(config);
  return ok ? 0 : 1;
}
