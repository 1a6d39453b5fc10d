/*
 * The ClickHouse sink (clickhouse_sink.h, docs/clickhouse.md).
 *
 * Invariants:
 * - Every statement names its tables in full (`db`.`table`); only the
 *   pass-through query runs with the database as the default one.
 * - A run's rows reach a public table only through REPLACE PARTITION from
 *   a staging table of the same load, so a load that stops before
 *   publishing leaves no row visible. A load is one partition (load_id) of
 *   each table; replacing a run also publishes again, without it, the
 *   earlier loads' partitions that held it, before its own: it is never
 *   visible twice.
 * - Run ids reach SQL only as quoted literals (quote_string()), and the
 *   database name only after validate_database() (a plain identifier).
 */
#include "sink/clickhouse_sink.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "session/session_error.h"
#include "session/session_view.h"
#include "sink/clickhouse_result.h"
#include "sink/clickhouse_tables.h"
#include "sink/http_client.h"
#include "sql/sql_output.h"


#define DEFAULT_PORT 8123
#define RUN_ID_MAX 256
/* Bytes of Native encoded at a time for libcurl to send. */
#define BATCH_BYTES (1u << 20)
/* INSERTs a table of more than two blocks goes in (insert_runs()): the
 * machine's two cores. */
#define INSERTS_PER_TABLE 2
/* Batches encoded ahead of the socket per INSERT (insert_stream). */
#define PIPELINE_BATCHES 16
/* Rows per Native block: each block the server receives becomes a part of
 * the staging table as it is (the INSERT asks the server not to squash
 * blocks of this size: min_insert_block_size_rows), so a table's rows of a
 * load go in at most BLOCKS_PER_TABLE blocks of BLOCK_ROWS_MIN to
 * BLOCK_ROWS_MAX rows; beyond BLOCKS_PER_TABLE * BLOCK_ROWS_MAX rows, in
 * more blocks of BLOCK_ROWS_MAX. A run's last, smaller block is squashed by
 * the server with the next ones. Measured on the 18.16 server
 * (docs/clickhouse.md, "Wire format"): 256 Ki-row blocks cost the least
 * server CPU per row with merges counted (smaller ones insert cheaper but
 * make more parts to merge), and parts_to_delay_insert (150 parts a
 * partition) stays far. */
#define BLOCK_ROWS_MIN ((size_t)1 << 18)
#define BLOCK_ROWS_MAX ((size_t)1 << 20)
#define BLOCKS_PER_TABLE 64
/* Settings of every statement of ours, and of pass-through queries (so
 * that `CREATE TABLE x AS slice` works there too): the 18.16 server
 * creates LowCardinality columns (clickhouse_tables.c) only when asked
 * to; later servers accept the setting and ignore it. */
#define STATEMENT_SETTINGS "allow_experimental_low_cardinality_type=1"
/* Answers of our own SELECTs are small; more than this is a fault. */
#define SMALL_ANSWER_MAX (16u << 20)

struct tm_clickhouse {
  char *server;   /* "host:port", for messages */
  char *database; /* a plain identifier (validate_database) */
  http_client *http;
  uint64_t rows_loaded;
  size_t block_rows; /* clickhouse_set_block_rows(); 0: chosen per table */
  clickhouse_load_hook hook;
  void *hook_data;
};

void clickhouse_set_load_hook(tm_clickhouse *ch, clickhouse_load_hook hook,
                              void *data) {
  ch->hook = hook;
  ch->hook_data = data;
}

void clickhouse_set_block_rows(tm_clickhouse *ch, size_t rows) {
  ch->block_rows = rows;
}

uint64_t tm_clickhouse_rows_loaded(const tm_clickhouse *ch) {
  return ch->rows_loaded;
}

/* ---- URL ----------------------------------------------------------------- */

static bool validate_database(const char *name) {
  if (!name || !(g_ascii_isalpha(name[0]) || name[0] == '_'))
    return false;
  for (const char *p = name; *p; p++)
    if (!(g_ascii_isalnum(*p) || *p == '_'))
      return false;
  return strlen(name) <= 128;
}

static bool url_error(const char *url, const char *why, GError **error) {
  g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_CLICKHOUSE_URL,
              "%s: %s (expected clickhouse://[USER[:PASSWORD]@]HOST[:PORT]/"
              "DATABASE)", url, why);
  return false;
}

tm_clickhouse *tm_clickhouse_open(const char *url, GError **error) {
  tm_clickhouse *ch = NULL;
  GUri *uri = g_uri_parse(url ? url : "", G_URI_FLAGS_HAS_PASSWORD, NULL);
  const char *path = uri ? g_uri_get_path(uri) : NULL;
  if (!uri || g_strcmp0(g_uri_get_scheme(uri), "clickhouse") != 0) {
    url_error(url ? url : "", "not a clickhouse:// URL", error);
    goto out;
  }
  const char *host = g_uri_get_host(uri);
  if (!host || !*host) {
    url_error(url, "no host", error);
    goto out;
  }
  if (!path || path[0] != '/' || !validate_database(path + 1)) {
    url_error(url, "the database must be a plain identifier "
                   "([A-Za-z_][A-Za-z0-9_]*)", error);
    goto out;
  }
  if (g_uri_get_query(uri) || g_uri_get_fragment(uri)) {
    url_error(url, "no ?query or #fragment is understood", error);
    goto out;
  }
  int port = g_uri_get_port(uri) > 0 ? g_uri_get_port(uri) : DEFAULT_PORT;
  bool ipv6 = strchr(host, ':') != NULL;
  ch = g_new0(tm_clickhouse, 1);
  ch->server = g_strdup_printf(ipv6 ? "[%s]:%d" : "%s:%d", host, port);
  ch->database = g_strdup(path + 1);
  char *base = g_strdup_printf("http://%s/", ch->server);
  ch->http = http_client_new(base, g_uri_get_user(uri),
                             g_uri_get_password(uri));
  g_free(base);
out:
  if (uri)
    g_uri_unref(uri);
  return ch;
}

void tm_clickhouse_free(tm_clickhouse *ch) {
  if (!ch)
    return;
  http_client_free(ch->http);
  g_free(ch->server);
  g_free(ch->database);
  g_free(ch);
}

/* ---- statements ---------------------------------------------------------- */

/* Takes `cause` (from the HTTP client, the result reader or the printers)
 * and reports it in TRACEMERGE_ERROR naming the server and `what`: the HTTP
 * client's as TM_ERROR_CLICKHOUSE_CONNECTION or _SERVER, the printers' as
 * tm_session_query's are (TM_ERROR_OUTPUT). */
static void report(tm_clickhouse *ch, GError **error, GError *cause,
                   const char *what) {
  if (cause->domain == TM_HTTP_ERROR) {
    int code = cause->code == TM_HTTP_ERROR_TRANSPORT
                   ? TM_ERROR_CLICKHOUSE_CONNECTION
                   : TM_ERROR_CLICKHOUSE_SERVER;
    g_set_error(error, TRACEMERGE_ERROR, code, "ClickHouse at %s: %s: %s",
                ch->server, what, cause->message);
    g_error_free(cause);
    return;
  }
  g_propagate_prefixed_error(error, cause, "ClickHouse at %s: %s: ",
                             ch->server, what);
  session_error_publish(false, error);
}

static bool collect_answer(void *ctx, const char *data, size_t len,
                           GError **error) {
  GString *answer = ctx;
  if (answer->len + len > SMALL_ANSWER_MAX) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_CLICKHOUSE_RESULT,
                "the answer is larger than %u bytes", SMALL_ANSWER_MAX);
    return false;
  }
  g_string_append_len(answer, data, (gssize)len);
  return true;
}

/* Runs one statement of ours; its answer (if `answer`) is collected. */
static bool run_sql(tm_clickhouse *ch, const char *sql, GString *answer,
                    const char *what, GError **error) {
  http_request request = {
      .query_string = STATEMENT_SETTINGS,
      .body = sql,
      .body_len = strlen(sql),
      .on_data = answer ? collect_answer : NULL,
      .data_ctx = answer,
  };
  GError *cause = NULL;
  if (http_client_post(ch->http, &request, &cause))
    return true;
  report(ch, error, cause, what);
  return false;
}

/* 'text' as a ClickHouse string literal. */
static void quote_string(GString *sql, const char *text) {
  g_string_append_c(sql, '\'');
  for (const char *p = text; *p; p++) {
    if (*p == '\'' || *p == '\\')
      g_string_append_c(sql, '\\');
    g_string_append_c(sql, *p);
  }
  g_string_append_c(sql, '\'');
}

/* The lines of a TabSeparated answer, unescaped. */
static char **answer_lines(const GString *answer) {
  GPtrArray *lines = g_ptr_array_new();
  const char *p = answer->str, *end = answer->str + answer->len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *stop = nl ? nl : end;
    size_t len;
    g_ptr_array_add(lines, ch_tsv_unescape(p, (size_t)(stop - p), &len));
    p = stop + 1;
  }
  g_ptr_array_add(lines, NULL);
  return (char **)g_ptr_array_free(lines, FALSE);
}

/* ---- schema -------------------------------------------------------------- */

static char *qualified(const tm_clickhouse *ch, const char *table) {
  return g_strdup_printf("`%s`.`%s`", ch->database, table);
}

static bool read_schema_version(tm_clickhouse *ch, bool *present,
                                uint32_t *version, GError **error) {
  char *sql = g_strdup_printf("SELECT count(), max(version) FROM "
                              "`%s`.`schema_version` FORMAT TabSeparated",
                              ch->database);
  GString *answer = g_string_new(NULL);
  bool ok = run_sql(ch, sql, answer, "reading schema_version", error);
  if (ok) {
    guint64 count = 0, max = 0;
    if (sscanf(answer->str, "%" G_GUINT64_FORMAT "\t%" G_GUINT64_FORMAT,
               &count, &max) != 2) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_CLICKHOUSE_RESULT,
                  "ClickHouse at %s: reading schema_version: unexpected "
                  "answer \"%s\"", ch->server, answer->str);
      ok = false;
    }
    *present = count > 0;
    *version = (uint32_t)max;
  }
  g_string_free(answer, TRUE);
  g_free(sql);
  return ok;
}

static bool version_matches(tm_clickhouse *ch, uint32_t version,
                            GError **error) {
  if (version == CLICKHOUSE_SCHEMA_VERSION)
    return true;
  g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_CLICKHOUSE_SCHEMA,
              "ClickHouse at %s: database %s holds tracemerge schema version "
              "%u; this tracemerge reads and writes version %u",
              ch->server, ch->database, version, CLICKHOUSE_SCHEMA_VERSION);
  return false;
}

bool tm_clickhouse_create_schema(tm_clickhouse *ch, GError **error) {
  bool ok = false, present = false;
  uint32_t version = 0;
  char *sql = g_strdup_printf("CREATE DATABASE IF NOT EXISTS `%s`",
                              ch->database);
  char *what = NULL;
  if (!run_sql(ch, sql, NULL, "creating the database", error))
    goto out;
  g_free(sql);
  sql = g_strdup_printf("CREATE TABLE IF NOT EXISTS `%s`.`schema_version` "
                        "(`version` UInt32, `created` DateTime DEFAULT now()) "
                        "ENGINE = MergeTree() ORDER BY version",
                        ch->database);
  if (!run_sql(ch, sql, NULL, "creating table schema_version", error) ||
      !read_schema_version(ch, &present, &version, error))
    goto out;
  if (present && !version_matches(ch, version, error))
    goto out;
  for (size_t i = 0; i < ch_table_count(); i++) {
    const ch_table *table = ch_table_at(i);
    char *name = qualified(ch, ch_table_name(table));
    g_free(sql);
    sql = ch_table_create_sql(table, name);
    g_free(name);
    g_free(what);
    what = g_strdup_printf("creating table %s", ch_table_name(table));
    if (!run_sql(ch, sql, NULL, what, error))
      goto out;
  }
  if (!present) {
    g_free(sql);
    sql = g_strdup_printf("INSERT INTO `%s`.`schema_version` (version) "
                          "VALUES (%u)",
                          ch->database, CLICKHOUSE_SCHEMA_VERSION);
    if (!run_sql(ch, sql, NULL, "recording the schema version", error))
      goto out;
  }
  ok = true;
out:
  g_free(what);
  g_free(sql);
  return ok;
}

/* Every table there and the version ours. */
static bool check_schema(tm_clickhouse *ch, GError **error) {
  char *sql = g_strdup_printf("SELECT name FROM system.tables WHERE "
                              "database = '%s' FORMAT TabSeparated",
                              ch->database);
  GString *answer = g_string_new(NULL);
  GString *missing = g_string_new(NULL);
  char **names = NULL;
  bool ok = false;
  if (!run_sql(ch, sql, answer, "looking for the tracemerge tables", error))
    goto out;
  names = answer_lines(answer);
  for (size_t i = 0; i <= ch_table_count(); i++) {
    const char *want = i < ch_table_count() ? ch_table_name(ch_table_at(i))
                                            : "schema_version";
    if (!g_strv_contains((const char *const *)names, want))
      g_string_append_printf(missing, "%s%s", missing->len ? ", " : "", want);
  }
  if (missing->len) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_CLICKHOUSE_SCHEMA,
                "ClickHouse at %s: database %s lacks tracemerge tables (%s): "
                "create them first (import --create-schema)",
                ch->server, ch->database, missing->str);
    goto out;
  }
  bool present = false;
  uint32_t version = 0;
  if (!read_schema_version(ch, &present, &version, error))
    goto out;
  ok = version_matches(ch, present ? version : 0, error);
out:
  g_strfreev(names);
  g_string_free(missing, TRUE);
  g_string_free(answer, TRUE);
  g_free(sql);
  return ok;
}

/* ---- runs ---------------------------------------------------------------- */

static bool validate_run_ids(const char *const *run_ids, size_t n,
                             GError **error) {
  GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
  bool ok = n > 0;
  if (!ok)
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_CLICKHOUSE_RUN_ID,
                "no run to load");
  for (size_t i = 0; ok && i < n; i++) {
    const char *id = run_ids[i];
    size_t len = id ? strlen(id) : 0;
    const char *why = NULL;
    if (len == 0 || len > RUN_ID_MAX)
      why = "must be 1 to 256 bytes";
    else if (!g_utf8_validate(id, (gssize)len, NULL))
      why = "is not valid UTF-8";
    for (size_t k = 0; !why && k < len; k++)
      if ((unsigned char)id[k] < 0x20 || id[k] == 0x7f)
        why = "must not hold control characters";
    if (!why && !g_hash_table_add(seen, (gpointer)id))
      why = "is given twice";
    if (why) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_CLICKHOUSE_RUN_ID,
                  "run id \"%s\" %s", id ? id : "", why);
      ok = false;
    }
  }
  g_hash_table_destroy(seen);
  return ok;
}

/* "run 'a'" or "runs 'a' .. 'z' (26)", for messages. */
static char *describe_runs(const char *const *run_ids, size_t n) {
  if (n == 1)
    return g_strdup_printf("run '%s'", run_ids[0]);
  return g_strdup_printf("runs '%s' .. '%s' (%zu)", run_ids[0],
                         run_ids[n - 1], n);
}

/* "'a','b'": the run ids as literals, for IN (...). */
static char *run_list(const char *const *run_ids, size_t n) {
  GString *list = g_string_new(NULL);
  for (size_t i = 0; i < n; i++) {
    if (i)
      g_string_append_c(list, ',');
    quote_string(list, run_ids[i]);
  }
  return g_string_free(list, FALSE);
}

/* Fails (TM_ERROR_CLICKHOUSE_RUN_EXISTS) if any table holds a row of any
 * of the runs. */
static bool refuse_existing(tm_clickhouse *ch, const char *const *run_ids,
                            size_t n, GError **error) {
  char *list = run_list(run_ids, n);
  GString *sql = g_string_new("SELECT DISTINCT run_id FROM (");
  for (size_t i = 0; i < ch_table_count(); i++)
    g_string_append_printf(sql,
                           "%sSELECT run_id FROM `%s`.`%s` WHERE run_id IN (%s)",
                           i ? " UNION ALL " : "", ch->database,
                           ch_table_name(ch_table_at(i)), list);
  g_string_append(sql, ") ORDER BY run_id FORMAT TabSeparated");
  GString *answer = g_string_new(NULL);
  bool ok = run_sql(ch, sql->str, answer, "looking for loaded runs", error);
  if (ok && answer->len > 0) {
    char **found = answer_lines(answer);
    guint count = g_strv_length(found);
    char *more = count == 1 ? g_strdup("")
                            : g_strdup_printf(" (and %u more)", count - 1);
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_CLICKHOUSE_RUN_EXISTS,
                "ClickHouse at %s: run '%s'%s already loaded in database %s: "
                "nothing loaded (replace mode replaces a loaded run)",
                ch->server, found[0], more, ch->database);
    g_free(more);
    g_strfreev(found);
    ok = false;
  }
  g_string_free(answer, TRUE);
  g_string_free(sql, TRUE);
  g_free(list);
  return ok;
}

bool tm_clickhouse_check(tm_clickhouse *ch, const char *const *run_ids,
                         size_t n_runs, tm_clickhouse_load_mode mode,
                         GError **error) {
  return validate_run_ids(run_ids, n_runs, error) &&
         check_schema(ch, error) &&
         (mode == TM_CLICKHOUSE_REPLACE ||
          refuse_existing(ch, run_ids, n_runs, error));
}

/* ---- loads --------------------------------------------------------------- */

/* Statements of one step run together, this many at a time: the server
 * works on different tables in different threads, and small statements
 * spend most of their time waiting for it. */
#define PARALLEL_STATEMENTS 4

/* One statement of a step: its SQL (or, for a streamed INSERT, the
 * request that carries it), what it does for messages, and its outcome. */
typedef struct statement {
  char *sql;
  char *what;
  char *query_string; /* a streamed INSERT's, owned */
  http_request request;
  size_t table;       /* index in ch_table_at() */
  bool done;
} statement;

static void statements_free(statement *st, size_t n) {
  for (size_t i = 0; i < n; i++) {
    g_free(st[i].sql);
    g_free(st[i].what);
    g_free(st[i].query_string);
  }
  g_free(st);
}

/* Runs every statement to its end; false with the first failure in
 * statement order (named by its `what`); `done` says which succeeded. */
static bool run_statements(tm_clickhouse *ch, statement *st, size_t n,
                           GError **error) {
  http_request *requests = g_new0(http_request, n + 1);
  GError **errors = g_new0(GError *, n + 1);
  for (size_t i = 0; i < n; i++) {
    requests[i] = st[i].request;
    if (!requests[i].body_fn) {
      requests[i].query_string = STATEMENT_SETTINGS;
      requests[i].body = st[i].sql;
      requests[i].body_len = strlen(st[i].sql);
    }
  }
  bool ok = http_client_post_all(ch->http, requests, n, PARALLEL_STATEMENTS,
                                 errors);
  bool reported = false;
  for (size_t i = 0; i < n; i++) {
    st[i].done = errors[i] == NULL;
    if (errors[i] && !reported) {
      report(ch, error, errors[i], st[i].what);
      reported = true;
    } else if (errors[i]) {
      g_error_free(errors[i]);
    }
  }
  g_free(errors);
  g_free(requests);
  return ok;
}

/* One INSERT's body: a table's rows of a group of runs, in blocks of
 * `block_rows` rows (a block holds rows of one run), encoded by a thread
 * of its own (producer()) into batches of BATCH_BYTES while libcurl, on
 * the loading thread, sends the batches before them (insert_body()): the
 * client encodes the next block while the server stores the last one, on
 * the machine's other core. At most PIPELINE_BATCHES batches are held per
 * INSERT: the encoder runs that far ahead of the socket and then waits.
 * The producer starts with the INSERT's first body bytes and is stopped
 * (stream_stop()) however the request ended. */
typedef struct batch {
  ch_bytes bytes;
  uint64_t rows; /* of the statement, in the blocks encoded whole */
} batch;

typedef struct insert_stream {
  tm_clickhouse *ch;
  const ch_table *table;
  const ch_run_source *runs;
  size_t n_runs;
  size_t block_rows;
  size_t part, parts; /* this INSERT's share of each run's rows */
  GThread *producer; /* NULL until the first body bytes are asked for */
  GMutex lock;       /* guards the fields below it */
  GCond changed;
  GQueue filled;     /* batch *, in order */
  GQueue spare;      /* batch *, sent and reusable */
  size_t n_batches;  /* made so far, at most PIPELINE_BATCHES */
  bool produced;     /* the producer has encoded every run */
  uint64_t rows_produced; /* then: the rows of every run */
  bool stop;         /* the request ended: the producer gives up */
  batch *sending;    /* the loading thread's; NULL between batches */
  size_t sent;       /* bytes of `sending` handed to libcurl */
  uint64_t rows;     /* rows in the blocks sent whole */
} insert_stream;

static void batch_free(gpointer data) {
  batch *b = data;
  ch_bytes_clear(&b->bytes);
  g_free(b);
}

/* A batch to fill: a spare one, a new one while fewer than
 * PIPELINE_BATCHES exist, else the next one sent; NULL once stopped. */
static batch *take_spare(insert_stream *s) {
  g_mutex_lock(&s->lock);
  while (!s->stop && g_queue_is_empty(&s->spare) &&
         s->n_batches == PIPELINE_BATCHES)
    g_cond_wait(&s->changed, &s->lock);
  batch *b = NULL;
  if (!s->stop) {
    b = g_queue_pop_head(&s->spare);
    if (!b) {
      b = g_new0(batch, 1);
      s->n_batches++;
    }
  }
  g_mutex_unlock(&s->lock);
  if (b)
    b->bytes.len = 0;
  return b;
}

static gpointer producer(gpointer data) {
  insert_stream *s = data;
  uint64_t rows_before = 0; /* rows of the runs before `r` */
  for (size_t r = 0; r < s->n_runs; r++) {
    ch_encoder *encoder = ch_encoder_new(s->table, &s->runs[r],
                                         s->block_rows);
    size_t rows = ch_table_row_count(s->table, s->runs[r].model);
    ch_encoder_limit(encoder, rows * s->part / s->parts,
                     rows * (s->part + 1) / s->parts);
    for (;;) {
      batch *b = take_spare(s);
      if (!b) {
        ch_encoder_free(encoder);
        return NULL;
      }
      bool more = ch_encoder_fill(encoder, &b->bytes, BATCH_BYTES);
      b->rows = rows_before + ch_encoder_rows_done(encoder);
      g_mutex_lock(&s->lock);
      g_queue_push_tail(more ? &s->filled : &s->spare, b);
      g_cond_broadcast(&s->changed);
      g_mutex_unlock(&s->lock);
      if (!more)
        break;
    }
    rows_before += ch_encoder_rows_done(encoder);
    ch_encoder_free(encoder);
  }
  g_mutex_lock(&s->lock);
  s->produced = true;
  s->rows_produced = rows_before;
  g_cond_broadcast(&s->changed);
  g_mutex_unlock(&s->lock);
  return NULL;
}

static gssize insert_body(void *ctx, char *buf, size_t cap, GError **error) {
  (void)error;
  insert_stream *s = ctx;
  if (!s->producer)
    s->producer = g_thread_new("tm-ch-encode", producer, s);
  if (!s->sending || s->sent == s->sending->bytes.len) {
    g_mutex_lock(&s->lock);
    if (s->sending)
      g_queue_push_tail(&s->spare, s->sending);
    s->sending = NULL;
    s->sent = 0;
    g_cond_broadcast(&s->changed);
    while (g_queue_is_empty(&s->filled) && !s->produced)
      g_cond_wait(&s->changed, &s->lock);
    s->sending = g_queue_pop_head(&s->filled);
    g_mutex_unlock(&s->lock);
    if (!s->sending) {
      s->rows = s->rows_produced;
      return 0; /* every run encoded and sent */
    }
    s->rows = s->sending->rows;
    if (s->ch->hook)
      s->ch->hook(s->ch->hook_data, ch_table_name(s->table), s->rows);
  }
  size_t n = MIN(cap, s->sending->bytes.len - s->sent);
  memcpy(buf, s->sending->bytes.data + s->sent, n);
  s->sent += n;
  return (gssize)n;
}

static void stream_init(insert_stream *s) {
  g_mutex_init(&s->lock);
  g_cond_init(&s->changed);
  g_queue_init(&s->filled);
  g_queue_init(&s->spare);
}

/* Ends the producer (waiting for it) and frees the batches. */
static void stream_stop(insert_stream *s) {
  g_mutex_lock(&s->lock);
  s->stop = true;
  g_cond_broadcast(&s->changed);
  g_mutex_unlock(&s->lock);
  if (s->producer)
    g_thread_join(s->producer);
  if (s->sending)
    batch_free(s->sending);
  g_queue_clear_full(&s->filled, batch_free);
  g_queue_clear_full(&s->spare, batch_free);
  g_mutex_clear(&s->lock);
  g_cond_clear(&s->changed);
}

/* Rows per block for `table` in a load of `runs` (see BLOCK_ROWS_MIN). */
static size_t block_rows_for(const tm_clickhouse *ch, const ch_table *table,
                             const ch_run_source *runs, size_t n_runs) {
  if (ch->block_rows)
    return ch->block_rows;
  size_t total = 0;
  for (size_t r = 0; r < n_runs; r++)
    total += ch_table_row_count(table, runs[r].model);
  size_t rows = (total + BLOCKS_PER_TABLE - 1) / BLOCKS_PER_TABLE;
  return CLAMP(rows, BLOCK_ROWS_MIN, BLOCK_ROWS_MAX);
}

/* The runs of the load as the steps need them. */
typedef struct load {
  tm_clickhouse *ch;
  const ch_run_source *runs;
  size_t n_runs;
  const char *const *run_ids;
  char *runs_text;
  char *run_list;    /* the run ids as a list of literals, for IN (...) */
  char *token;       /* the load's id: its partition, its stages' names */
  GPtrArray **old_loads; /* per table, replacing: loads holding our runs */
  char **stages;     /* per table: its staging table, NULL if none made */
  bool *has_rows;    /* per table: some run has rows there */
  bool *published;   /* per table: every statement of its publishing done */
  uint64_t rows;
} load;

/* Replacing: which earlier loads (partitions) of each table hold a row of
 * one of the runs. Those partitions are published again without the runs
 * (keep_other_runs()). */
static bool find_old_loads(load *l, GError **error) {
  size_t n_tables = ch_table_count();
  GString *sql = g_string_new("SELECT DISTINCT t, load_id FROM (");
  for (size_t t = 0; t < n_tables; t++)
    g_string_append_printf(sql,
                           "%sSELECT toUInt32(%zu) AS t, load_id FROM `%s`.`%s` "
                           "WHERE run_id IN (%s)",
                           t ? " UNION ALL " : "", t, l->ch->database,
                           ch_table_name(ch_table_at(t)), l->run_list);
  g_string_append(sql, ") FORMAT TabSeparated");
  GString *answer = g_string_new(NULL);
  bool ok = run_sql(l->ch, sql->str, answer, "looking for loaded runs", error);
  const char *p = answer->str, *end = answer->str + answer->len;
  while (ok && p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *stop = nl ? nl : end;
    const char *tab = memchr(p, '\t', (size_t)(stop - p));
    guint64 t = tab ? g_ascii_strtoull(p, NULL, 10) : n_tables;
    if (t >= n_tables) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_CLICKHOUSE_RESULT,
                  "ClickHouse at %s: looking for loaded runs: unexpected "
                  "answer \"%.*s\"", l->ch->server, (int)(stop - p), p);
      ok = false;
      break;
    }
    size_t len;
    g_ptr_array_add(l->old_loads[t],
                    ch_tsv_unescape(tab + 1, (size_t)(stop - tab - 1), &len));
    p = stop + 1;
  }
  g_string_free(answer, TRUE);
  g_string_free(sql, TRUE);
  return ok;
}

static bool create_stages(load *l, GError **error) {
  size_t n_tables = ch_table_count(), n = 0;
  statement *st = g_new0(statement, n_tables + 1);
  for (size_t t = 0; t < n_tables; t++) {
    if (!l->has_rows[t] && l->old_loads[t]->len == 0)
      continue;
    const char *table = ch_table_name(ch_table_at(t));
    char *stage = g_strdup_printf("_tm_stage_%s_%s", l->token, table);
    st[n].sql = g_strdup_printf("CREATE TABLE `%s`.`%s` AS `%s`.`%s`",
                                l->ch->database, stage, l->ch->database,
                                table);
    st[n].what = g_strdup_printf("creating staging table %s", stage);
    st[n].table = t;
    n++;
    g_free(stage);
  }
  bool ok = run_statements(l->ch, st, n, error);
  for (size_t i = 0; i < n; i++)
    if (st[i].done)
      l->stages[st[i].table] = g_strdup_printf(
          "_tm_stage_%s_%s", l->token, ch_table_name(ch_table_at(st[i].table)));
  statements_free(st, n);
  return ok;
}

/* Every table's rows of every run into its stage (all in the load's one
 * partition): one INSERT per table, or INSERTS_PER_TABLE for a table of
 * more than two blocks, each a share of every run's rows, so that the
 * largest table (args) is encoded and stored on both cores instead of
 * being the load's one long stream. */
static bool insert_runs(load *l, GError **error) {
  size_t n_tables = ch_table_count(), n = 0;
  statement *st = g_new0(statement, INSERTS_PER_TABLE * n_tables + 1);
  insert_stream *streams = g_new0(insert_stream,
                                  INSERTS_PER_TABLE * n_tables + 1);
  for (size_t t = 0; t < n_tables; t++) {
    if (!l->has_rows[t])
      continue;
    const ch_table *table = ch_table_at(t);
    size_t block_rows = block_rows_for(l->ch, table, l->runs, l->n_runs);
    size_t total = 0;
    for (size_t r = 0; r < l->n_runs; r++)
      total += ch_table_row_count(table, l->runs[r].model);
    size_t parts = total > 2 * block_rows ? INSERTS_PER_TABLE : 1;
    for (size_t part = 0; part < parts; part++) {
      char *sql = g_strdup_printf("INSERT INTO `%s`.`%s` FORMAT Native",
                                  l->ch->database, l->stages[t]);
      char *escaped = http_escape(sql);
      streams[n] = (insert_stream){.ch = l->ch, .table = table,
                                   .runs = l->runs, .n_runs = l->n_runs,
                                   .block_rows = block_rows, .part = part,
                                   .parts = parts};
      stream_init(&streams[n]);
      st[n].query_string = g_strdup_printf(
          "query=%s&min_insert_block_size_rows=%zu&" STATEMENT_SETTINGS,
          escaped, block_rows);
      st[n].request = (http_request){.query_string = st[n].query_string,
                                     .body_fn = insert_body,
                                     .body_ctx = &streams[n]};
      st[n].what = g_strdup_printf("loading %s into %s (staging table %s)",
                                   l->runs_text, ch_table_name(table),
                                   l->stages[t]);
      st[n].table = t;
      n++;
      g_free(escaped);
      g_free(sql);
    }
  }
  bool ok = run_statements(l->ch, st, n, error);
  for (size_t i = 0; i < n; i++) {
    l->rows += streams[i].rows;
    stream_stop(&streams[i]);
  }
  g_free(streams);
  statements_free(st, n);
  return ok;
}

/* "'a', 'b'": the load ids in `loads` as literals. */
static void append_load_list(GString *sql, const GPtrArray *loads) {
  for (guint i = 0; i < loads->len; i++) {
    if (i)
      g_string_append(sql, ", ");
    quote_string(sql, g_ptr_array_index(loads, i));
  }
}

/* Replacing: the rows of other runs in the partitions that held ours are
 * copied into the stage (server side), so that publishing those
 * partitions again removes only our runs' old rows. */
static bool keep_other_runs(load *l, GError **error) {
  size_t n_tables = ch_table_count(), n = 0;
  statement *st = g_new0(statement, n_tables + 1);
  for (size_t t = 0; t < n_tables; t++) {
    if (l->old_loads[t]->len == 0)
      continue;
    const char *table = ch_table_name(ch_table_at(t));
    GString *sql = g_string_new(NULL);
    g_string_append_printf(sql,
                           "INSERT INTO `%s`.`%s` SELECT * FROM `%s`.`%s` "
                           "WHERE load_id IN (",
                           l->ch->database, l->stages[t], l->ch->database,
                           table);
    append_load_list(sql, l->old_loads[t]);
    g_string_append_printf(sql, ") AND run_id NOT IN (%s)", l->run_list);
    st[n].sql = g_string_free(sql, FALSE);
    st[n].what = g_strdup_printf("keeping the other runs of earlier loads "
                                 "of %s (staging table %s)",
                                 table, l->stages[t]);
    st[n].table = t;
    n++;
  }
  bool ok = run_statements(l->ch, st, n, error);
  statements_free(st, n);
  return ok;
}

/* The ALTER that publishes table `t`: the earlier loads that held our runs
 * replaced by what the stage holds of them (the other runs; nothing
 * drops the partition), then the load's own partition. Old partitions
 * first: a run is never visible twice, at worst briefly not at all. NULL
 * if the table has nothing to publish. */
static char *publish_sql(const load *l, size_t t) {
  if (!l->stages[t])
    return NULL;
  const char *table = ch_table_name(ch_table_at(t));
  GString *sql = g_string_new(NULL);
  g_string_append_printf(sql, "ALTER TABLE `%s`.`%s`", l->ch->database,
                         table);
  const GPtrArray *old = l->old_loads[t];
  for (guint i = 0; i <= old->len; i++) {
    const char *partition = i < old->len ? g_ptr_array_index(old, i)
                                         : l->token;
    if (i == old->len && !l->has_rows[t])
      break;
    g_string_append(sql, i ? ", REPLACE PARTITION " : " REPLACE PARTITION ");
    quote_string(sql, partition);
    g_string_append_printf(sql, " FROM `%s`.`%s`", l->ch->database,
                           l->stages[t]);
  }
  return g_string_free(sql, FALSE);
}

/* Publishes tables [from, to) together; `published` says which made it. */
static bool publish_tables(load *l, size_t from, size_t to, GError **error) {
  statement *st = g_new0(statement, to - from + 1);
  size_t n = 0;
  for (size_t t = from; t < to; t++) {
    l->published[t] = true;
    char *sql = publish_sql(l, t);
    if (!sql)
      continue;
    st[n].sql = sql;
    st[n].what = g_strdup_printf("publishing %s in %s", l->runs_text,
                                 ch_table_name(ch_table_at(t)));
    st[n].table = t;
    n++;
  }
  bool ok = run_statements(l->ch, st, n, error);
  for (size_t i = 0; i < n; i++)
    l->published[st[i].table] = st[i].done;
  statements_free(st, n);
  return ok;
}

/* Drops the staging tables made; false if any drop failed. */
static bool drop_stages(load *l) {
  size_t n_tables = ch_table_count(), n = 0;
  statement *st = g_new0(statement, n_tables + 1);
  for (size_t t = 0; t < n_tables; t++) {
    if (!l->stages[t])
      continue;
    st[n].sql = g_strdup_printf("DROP TABLE IF EXISTS `%s`.`%s`",
                                l->ch->database, l->stages[t]);
    st[n].what = g_strdup_printf("dropping staging table %s", l->stages[t]);
    n++;
  }
  GError *ignored = NULL;
  bool ok = run_statements(l->ch, st, n, &ignored);
  g_clear_error(&ignored);
  statements_free(st, n);
  return ok;
}

/* Adds to a failed load's error what the failure left: nothing published
 * (anything before publishing), or which tables were. */
static void explain_failure(const load *l, GError **error) {
  if (!error || !*error)
    return;
  size_t n_tables = ch_table_count();
  GString *done = g_string_new(NULL), *not_done = g_string_new(NULL);
  bool any = false;
  for (size_t t = 0; t < n_tables; t++) {
    GString *list = l->published[t] ? done : not_done;
    g_string_append_printf(list, "%s%s", list->len ? ", " : "",
                           ch_table_name(ch_table_at(t)));
    any = any || (l->published[t] && l->stages[t]);
  }
  GError *cause = *error;
  *error = NULL;
  if (!any)
    g_set_error(error, cause->domain, cause->code,
                "%s; nothing of %s was published", cause->message,
                l->runs_text);
  else
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_CLICKHOUSE_PARTIAL,
                "%s; %s partly published (done: %s; not done: %s): load "
                "again in replace mode",
                cause->message, l->runs_text, done->str, not_done->str);
  g_error_free(cause);
  g_string_free(done, TRUE);
  g_string_free(not_done, TRUE);
}

static bool load_runs(tm_clickhouse *ch, ch_run_source *runs, size_t n_runs,
                      const char *const *run_ids,
                      tm_clickhouse_load_mode mode, GError **error) {
  size_t n_tables = ch_table_count();
  load l = {.ch = ch, .runs = runs, .n_runs = n_runs, .run_ids = run_ids};
  l.runs_text = describe_runs(run_ids, n_runs);
  l.run_list = run_list(run_ids, n_runs);
  l.token = g_strdup_printf("%08x%08x", g_random_int(), g_random_int());
  l.old_loads = g_new0(GPtrArray *, n_tables + 1);
  l.stages = g_new0(char *, n_tables + 1);
  l.has_rows = g_new0(bool, n_tables + 1);
  l.published = g_new0(bool, n_tables + 1);
  bool ok = false, checked = false;
  for (size_t r = 0; r < n_runs; r++)
    runs[r].load_id = l.token;
  for (size_t t = 0; t < n_tables; t++) {
    l.old_loads[t] = g_ptr_array_new_with_free_func(g_free);
    for (size_t r = 0; r < n_runs && !l.has_rows[t]; r++)
      l.has_rows[t] = ch_table_row_count(ch_table_at(t), runs[r].model) > 0;
  }

  if (!tm_clickhouse_check(ch, run_ids, n_runs, mode, error))
    goto out;
  checked = true;
  if (mode == TM_CLICKHOUSE_REPLACE && !find_old_loads(&l, error))
    goto out;
  if (!create_stages(&l, error) || !insert_runs(&l, error) ||
      !keep_other_runs(&l, error))
    goto out;
  /* Refusing: someone may have loaded one of the runs meanwhile. */
  if (mode == TM_CLICKHOUSE_REFUSE_EXISTING &&
      !refuse_existing(ch, run_ids, n_runs, error))
    goto out;
  if (ch->hook)
    ch->hook(ch->hook_data, NULL, UINT64_MAX);
  /* `machine` (the last table) only once every other table is published:
   * a run listed there is whole. */
  if (!publish_tables(&l, 0, n_tables - 1, error) ||
      !publish_tables(&l, n_tables - 1, n_tables, error))
    goto out;
  ch->rows_loaded = l.rows;
  ok = true;
out:
  if (!ok && checked)
    explain_failure(&l, error);
  if (!drop_stages(&l) && !ok && error && *error) {
    char *message = g_strdup_printf("%s (staging tables _tm_stage_%s_* stay "
                                    "in %s)",
                                    (*error)->message, l.token, ch->database);
    g_free((*error)->message);
    (*error)->message = message;
  }
  for (size_t t = 0; t < n_tables; t++) {
    g_free(l.stages[t]); /* NULL where no stage was made */
    g_ptr_array_unref(l.old_loads[t]);
  }
  g_free(l.old_loads);
  g_free(l.stages);
  g_free(l.has_rows);
  g_free(l.published);
  g_free(l.token);
  g_free(l.run_list);
  g_free(l.runs_text);
  return ok;
}

bool tm_clickhouse_load(tm_clickhouse *ch, const tm_clickhouse_run *runs,
                        size_t n_runs, tm_clickhouse_load_mode mode,
                        GError **error) {
  const char **run_ids = g_new0(const char *, n_runs + 1);
  ch_run_source *sources = g_new0(ch_run_source, n_runs + 1);
  bool ok = true;
  for (size_t i = 0; i < n_runs; i++) {
    run_ids[i] = runs[i].run_id;
    const tm_model *model = session_imported_model(runs[i].session);
    if (!model) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_CLICKHOUSE_RUN_ID,
                  "run '%s' has no imported session", runs[i].run_id);
      ok = false;
      n_runs = i;
      break;
    }
    sources[i].run_id = runs[i].run_id;
    sources[i].model = model;
    sources[i].file_machines =
        session_file_machines(runs[i].session, &sources[i].n_file_machines);
  }
  ch->rows_loaded = 0;
  if (ok)
    ok = load_runs(ch, sources, n_runs, run_ids, mode, error);
  for (size_t i = 0; i < n_runs; i++)
    g_free((uint32_t *)sources[i].file_machines);
  g_free(sources);
  g_free(run_ids);
  return ok;
}

/* ---- pass-through queries ------------------------------------------------ */

static bool feed_reader(void *ctx, const char *data, size_t len,
                        GError **error) {
  return ch_result_reader_feed(ctx, data, len, error);
}

bool tm_clickhouse_query(tm_clickhouse *ch, const char *sql,
                         const tm_query_options *options, FILE *out,
                         double timeout_seconds, GError **error) {
  GString *query_string = g_string_new(NULL);
  g_string_append_printf(query_string,
                         "database=%s&default_format="
                         "TabSeparatedWithNamesAndTypes&" STATEMENT_SETTINGS,
                         ch->database);
  if (timeout_seconds > 0)
    /* Whole seconds on 18.x servers; the server's own message wins over
     * the client's limit, which comes a little later. */
    g_string_append_printf(query_string, "&max_execution_time=%.0f",
                           ceil(timeout_seconds));
  ch_result_reader *reader = ch_result_reader_new(
      options ? options->format : TM_FORMAT_CSV,
      options ? options->column_width : 0, out);
  http_request request = {
      .query_string = query_string->str,
      .body = sql,
      .body_len = strlen(sql),
      .on_data = feed_reader,
      .data_ctx = reader,
      .timeout_seconds = timeout_seconds > 0 ? ceil(timeout_seconds) + 5 : 0,
  };
  GError *cause = NULL;
  bool ok = http_client_post(ch->http, &request, &cause) &&
            ch_result_reader_finish(reader, &cause);
  if (!ok)
    report(ch, error, cause, "query");
  ch_result_reader_free(reader);
  g_string_free(query_string, TRUE);
  return ok;
}
