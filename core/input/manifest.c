/*
 * The perfetto_manifest: parse, validate and resolve (see manifest.h).
 *
 * The JSON is read with yajl's streaming parser into a small pruned tree:
 * only values under keys the manifest grammar knows are stored (a static
 * schema says which), values under unknown keys and the children of values
 * of an unexpected type are skipped with a depth counter. So the tree holds
 * at most a few nodes per stored scalar, nothing recurses on the input, and
 * the checks then read the tree in the reference's validation order, with
 * the reference's DOM semantics (a repeated key: the last value wins).
 *
 * Invariants: the tree is built only from complete, valid JSON; every
 * message below is the reference's text (docs/clock-model.md §10) byte for
 * byte; every array the result points into is allocated once at its final
 * size, so pointers into it (hash table keys included) stay valid.
 */
#include "input/manifest.h"

#include <inttypes.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "base/vec.h"

G_DEFINE_QUARK(tm-manifest-error-quark, manifest_error)

#define NO_NODE UINT32_MAX
#define PREFIX "perfetto_manifest: "

static const char *const clock_names[] = {
    NULL,        "REALTIME",         "REALTIME_COARSE",
    "MONOTONIC", "MONOTONIC_COARSE", "MONOTONIC_RAW",
    "BOOTTIME",
};
#define N_CLOCKS 7

const char *manifest_clock_name(uint32_t clock_id) {
  return clock_id > 0 && clock_id < N_CLOCKS ? clock_names[clock_id] : NULL;
}

/* ---- Detection ---------------------------------------------------------- */

/* The C locale's isspace(), as the reference's sniffer strips. */
static bool is_space(uint8_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
         c == '\r';
}

bool manifest_detect(const uint8_t *head, size_t len) {
  static const char want[] = "{\"perfetto_manifest\"";
  const size_t want_len = sizeof want - 1;
  size_t n = len < 128 ? len : 128;
  size_t matched = 0;
  for (size_t i = 0; i < n && matched < want_len; i++) {
    if (is_space(head[i]))
      continue;
    if (head[i] != (uint8_t)want[matched])
      return false;
    matched++;
  }
  return matched == want_len;
}

/* ---- The pruned JSON tree ---------------------------------------------- */

typedef enum json_type {
  JSON_NULL,
  JSON_BOOL,
  JSON_NUMBER,
  JSON_STRING,
  JSON_ARRAY,
  JSON_OBJECT,
} json_type;

/* One id per key the grammar knows. A stored object member carries its
 * key's id; members of `attributes` carry F_ANY_KEY and keep their text. */
typedef enum field {
  F_NONE = 0,
  F_ANY_KEY,
  F_PERFETTO_MANIFEST,
  F_VERSION,
  F_TRACE_TIME,
  F_FILES,
  F_ATTRIBUTES,
  F_CLOCK,
  F_FILE,
  F_MACHINE,
  F_MACHINES,
  F_PATH,
  F_CLOCKS,
  F_SYNC_TO,
  F_OFFSET_NS,
  F_NAME,
  F_ID,
  F_EXPORTED_TABLE,
  F_FORMAT,
  F_ROW_COUNT,
  F_COLUMNS,
  F_TYPE,
  F_NULLABILITY,
  F_SORT,
  F_DUPLICATES,
} field;

typedef enum schema_kind {
  SCHEMA_VALUE,  /* scalars stored; a container stored without children */
  SCHEMA_OBJECT, /* members with known keys stored, others skipped */
  SCHEMA_ARRAY,  /* every element stored with `element` */
  SCHEMA_MAP,    /* every member stored as a SCHEMA_VALUE, key kept */
} schema_kind;

typedef struct schema schema;
typedef struct schema_field {
  const char *key;
  field id;
  const schema *child;
} schema_field;
struct schema {
  schema_kind kind;
  const schema_field *fields;
  size_t n_fields;
  const schema *element;
};

#define OBJECT_SCHEMA(name, ...)                                               \
  static const schema_field name##_fields[] = {__VA_ARGS__};                   \
  static const schema name = {SCHEMA_OBJECT, name##_fields,                    \
                              G_N_ELEMENTS(name##_fields), NULL}

static const schema s_value = {SCHEMA_VALUE, NULL, 0, NULL};
static const schema s_map = {SCHEMA_MAP, NULL, 0, NULL};
OBJECT_SCHEMA(s_column, {"name", F_NAME, &s_value}, {"type", F_TYPE, &s_value},
              {"nullability", F_NULLABILITY, &s_value},
              {"sort", F_SORT, &s_value},
              {"duplicates", F_DUPLICATES, &s_value});
static const schema s_columns = {SCHEMA_ARRAY, NULL, 0, &s_column};
OBJECT_SCHEMA(s_table, {"format", F_FORMAT, &s_value},
              {"name", F_NAME, &s_value}, {"row_count", F_ROW_COUNT, &s_value},
              {"columns", F_COLUMNS, &s_columns});
OBJECT_SCHEMA(s_machine, {"name", F_NAME, &s_value});
OBJECT_SCHEMA(s_machines_entry, {"id", F_ID, &s_value},
              {"name", F_NAME, &s_value});
static const schema s_machines = {SCHEMA_ARRAY, NULL, 0, &s_machines_entry};
OBJECT_SCHEMA(s_sync_to, {"file", F_FILE, &s_value},
              {"machine", F_MACHINE, &s_value}, {"clock", F_CLOCK, &s_value});
OBJECT_SCHEMA(s_clocks, {"machine", F_MACHINE, &s_value},
              {"clock", F_CLOCK, &s_value}, {"sync_to", F_SYNC_TO, &s_sync_to},
              {"offset_ns", F_OFFSET_NS, &s_value});
OBJECT_SCHEMA(s_file, {"path", F_PATH, &s_value},
              {"clocks", F_CLOCKS, &s_clocks},
              {"machine", F_MACHINE, &s_machine},
              {"machines", F_MACHINES, &s_machines},
              {"__exported_table_schema", F_EXPORTED_TABLE, &s_table});
static const schema s_files = {SCHEMA_ARRAY, NULL, 0, &s_file};
OBJECT_SCHEMA(s_trace_time, {"clock", F_CLOCK, &s_value},
              {"file", F_FILE, &s_value}, {"machine", F_MACHINE, &s_value});
OBJECT_SCHEMA(s_manifest, {"version", F_VERSION, &s_value},
              {"trace_time", F_TRACE_TIME, &s_trace_time},
              {"files", F_FILES, &s_files},
              {"attributes", F_ATTRIBUTES, &s_map});
OBJECT_SCHEMA(s_root, {"perfetto_manifest", F_PERFETTO_MANIFEST, &s_manifest});

typedef struct json_node {
  uint32_t first_child; /* NO_NODE if none (or not stored) */
  uint32_t next;        /* next sibling */
  uint32_t text;        /* string / number text: arena offset, NUL-ended */
  uint32_t text_len;
  uint32_t key; /* F_ANY_KEY members: the key, arena offset, NUL-ended */
  uint32_t key_len;
  uint8_t type;  /* json_type */
  uint8_t field; /* field */
  bool boolean;
} json_node;

typedef struct frame {
  uint32_t node;
  uint32_t last_child;
  const schema *schema;
} frame;

struct tm_manifest_parser {
  yajl_handle yajl;
  TM_VEC(json_node) nodes;
  TM_VEC(char) arena;
  TM_VEC(frame) frames; /* stored containers, at most the schema's depth */
  uint32_t root;
  uint32_t skip_depth; /* > 0: inside a value that is not stored */
  uint32_t depth;      /* every open container, stored or not */
  /* Bit d: the container open at depth d is an object (for messages). */
  uint8_t in_object[TM_MANIFEST_MAX_DEPTH / 8 + 1];
  /* The member about to be read in the top frame's object. */
  const schema *pending_schema;
  field pending_field;
  bool pending_skip;
  uint32_t pending_key, pending_key_len;
  size_t fed;         /* bytes fed so far */
  size_t chunk_start; /* bytes fed before the chunk yajl is reading */
  GError *cancel;     /* why a callback stopped the parse */
  bool done;          /* failed or finished: only free is valid */
};

static uint32_t arena_add(tm_manifest_parser *p, const char *s, size_t len) {
  uint32_t off = (uint32_t)p->arena.len;
  tm_vec_reserve(&p->arena, p->arena.len + len + 1);
  if (len > 0)
    memcpy(p->arena.data + off, s, len);
  p->arena.data[off + len] = '\0';
  p->arena.len += len + 1;
  return off;
}

/* The schema of the value about to start, or NULL if it is not stored. */
static const schema *value_schema(const tm_manifest_parser *p, field *id) {
  if (p->skip_depth > 0)
    return NULL;
  if (p->frames.len == 0) {
    *id = F_NONE;
    return p->root == NO_NODE ? &s_root : NULL;
  }
  const frame *top = &p->frames.data[p->frames.len - 1];
  if (top->schema->kind == SCHEMA_ARRAY) {
    *id = F_NONE;
    return top->schema->element;
  }
  if (p->pending_skip)
    return NULL;
  *id = p->pending_field;
  return p->pending_schema;
}

static uint32_t store(tm_manifest_parser *p, json_type type, field id) {
  uint32_t index = (uint32_t)p->nodes.len;
  json_node *n = tm_vec_push_zero(&p->nodes);
  n->type = (uint8_t)type;
  n->field = (uint8_t)id;
  n->first_child = n->next = NO_NODE;
  if (id == F_ANY_KEY) {
    n->key = p->pending_key;
    n->key_len = p->pending_key_len;
  }
  if (p->frames.len == 0) {
    p->root = index;
  } else {
    frame *top = &p->frames.data[p->frames.len - 1];
    if (top->last_child == NO_NODE)
      p->nodes.data[top->node].first_child = index;
    else
      p->nodes.data[top->last_child].next = index;
    top->last_child = index;
  }
  /* A member's key is used once. */
  p->pending_skip = true;
  return index;
}

static int scalar(tm_manifest_parser *p, json_type type, const char *text,
                  size_t len, bool boolean) {
  field id;
  const schema *s = value_schema(p, &id);
  if (s == NULL) {
    p->pending_skip = true;
    return 1;
  }
  uint32_t index = store(p, type, id);
  uint32_t off = text ? arena_add(p, text, len) : 0;
  json_node *n = &p->nodes.data[index];
  n->boolean = boolean;
  n->text = off;
  n->text_len = (uint32_t)len;
  return 1;
}

static int on_null(void *ctx) { return scalar(ctx, JSON_NULL, NULL, 0, false); }

static int on_boolean(void *ctx, int value) {
  return scalar(ctx, JSON_BOOL, NULL, 0, value != 0);
}

static int on_number(void *ctx, const char *text, size_t len) {
  return scalar(ctx, JSON_NUMBER, text, len, false);
}

static int on_string(void *ctx, const unsigned char *text, size_t len) {
  return scalar(ctx, JSON_STRING, (const char *)text, len, false);
}

static int container_start(tm_manifest_parser *p, json_type type) {
  if (p->depth >= TM_MANIFEST_MAX_DEPTH) {
    p->cancel =
        g_error_new(TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_JSON,
                    "nesting deeper than %d levels", TM_MANIFEST_MAX_DEPTH);
    return 0;
  }
  if (type == JSON_OBJECT)
    p->in_object[p->depth / 8] |= (uint8_t)(1u << (p->depth % 8));
  else
    p->in_object[p->depth / 8] &= (uint8_t) ~(1u << (p->depth % 8));
  p->depth++;

  field id;
  const schema *s = value_schema(p, &id);
  if (s == NULL) {
    p->skip_depth++;
    return 1;
  }
  uint32_t index = store(p, type, id);
  bool descend = type == JSON_OBJECT
                     ? s->kind == SCHEMA_OBJECT || s->kind == SCHEMA_MAP
                     : s->kind == SCHEMA_ARRAY;
  if (!descend) {
    p->skip_depth = 1;
    return 1;
  }
  tm_vec_push(&p->frames, ((frame){index, NO_NODE, s}));
  return 1;
}

static int container_end(tm_manifest_parser *p) {
  p->depth--;
  if (p->skip_depth > 0)
    p->skip_depth--;
  else
    p->frames.len--;
  p->pending_skip = true;
  return 1;
}

static int on_start_map(void *ctx) { return container_start(ctx, JSON_OBJECT); }
static int on_start_array(void *ctx) {
  return container_start(ctx, JSON_ARRAY);
}
static int on_end_map(void *ctx) { return container_end(ctx); }
static int on_end_array(void *ctx) { return container_end(ctx); }

static int on_map_key(void *ctx, const unsigned char *key, size_t len) {
  tm_manifest_parser *p = ctx;
  if (p->skip_depth > 0)
    return 1;
  const schema *s = p->frames.data[p->frames.len - 1].schema;
  p->pending_skip = true;
  if (s->kind == SCHEMA_MAP) {
    p->pending_schema = &s_value;
    p->pending_field = F_ANY_KEY;
    p->pending_key = arena_add(p, (const char *)key, len);
    p->pending_key_len = (uint32_t)len;
    p->pending_skip = false;
    return 1;
  }
  for (size_t i = 0; i < s->n_fields; i++) {
    const schema_field *f = &s->fields[i];
    if (strlen(f->key) == len && memcmp(f->key, key, len) == 0) {
      p->pending_schema = f->child;
      p->pending_field = f->id;
      p->pending_skip = false;
      break;
    }
  }
  return 1;
}

static const yajl_callbacks callbacks = {
    .yajl_null = on_null,
    .yajl_boolean = on_boolean,
    .yajl_number = on_number,
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_map_key,
    .yajl_end_map = on_end_map,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end_array,
};

tm_manifest_parser *manifest_parser_new(void) {
  tm_manifest_parser *p = g_new0(tm_manifest_parser, 1);
  p->root = NO_NODE;
  p->pending_skip = true;
  p->yajl = yajl_alloc(&callbacks, NULL, p);
  /* The reference's parser stops after the root value. */
  yajl_config(p->yajl, yajl_allow_trailing_garbage, 1);
  return p;
}

void manifest_parser_free(tm_manifest_parser *p) {
  if (p == NULL)
    return;
  yajl_free(p->yajl);
  tm_vec_free(&p->nodes);
  tm_vec_free(&p->arena);
  tm_vec_free(&p->frames);
  g_clear_error(&p->cancel);
  g_free(p);
}

/* A JSON error in the reference's shapes: "Failed to start parsing: ..."
 * before the root value, else "Failed to parse object|array: ..." for the
 * innermost open container; with yajl's reason and how far it had read
 * (yajl does not say where the offending token starts). */
static void set_json_error(tm_manifest_parser *p, const uint8_t *chunk,
                           size_t chunk_len, GError **error) {
  /* At the end of input (no chunk) the error is where the input ends. */
  size_t offset = chunk == NULL
                      ? p->fed
                      : p->chunk_start + yajl_get_bytes_consumed(p->yajl);
  char *reason;
  if (p->cancel != NULL) {
    reason = g_strdup(p->cancel->message);
  } else {
    unsigned char *text = yajl_get_error(p->yajl, 0, chunk, chunk_len);
    reason = g_strchomp(g_strdup((const char *)text));
    yajl_free_error(p->yajl, text);
    size_t n = strlen(reason);
    if (n > 0 && reason[n - 1] == '.')
      reason[n - 1] = '\0';
  }
  const char *where;
  if (p->depth == 0)
    where = "Failed to start parsing";
  else if (p->in_object[(p->depth - 1) / 8] & (1u << ((p->depth - 1) % 8)))
    where = "Failed to parse object";
  else
    where = "Failed to parse array";
  g_set_error(error, TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_JSON,
              "%s: %s, near byte %zu", where, reason, offset);
  g_free(reason);
  p->done = true;
}

bool manifest_parser_feed(tm_manifest_parser *p, const uint8_t *data,
                          size_t len, GError **error) {
  if (p->done) {
    g_set_error_literal(error, TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_JSON,
                        "the manifest parser has already stopped");
    return false;
  }
  if (len > TM_MANIFEST_MAX_BYTES - p->fed) {
    g_set_error(error, TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_TOO_LARGE,
                PREFIX "the manifest is larger than %zu bytes (16 MiB); a "
                       "manifest only lists files, machines and attributes",
                TM_MANIFEST_MAX_BYTES);
    p->done = true;
    return false;
  }
  p->chunk_start = p->fed;
  p->fed += len;
  if (len == 0)
    return true;
  if (yajl_parse(p->yajl, data, len) != yajl_status_ok) {
    set_json_error(p, data, len, error);
    return false;
  }
  return true;
}

/* ---- Reading the tree ---------------------------------------------------- */

static const json_node *node_at(const tm_manifest_parser *p, uint32_t index) {
  return index == NO_NODE ? NULL : &p->nodes.data[index];
}

/* The member `id` of `obj` (the last one if repeated), or NULL if `obj` is
 * not an object or has none. */
static const json_node *member(const tm_manifest_parser *p,
                               const json_node *obj, field id) {
  if (obj == NULL || obj->type != JSON_OBJECT)
    return NULL;
  const json_node *found = NULL;
  for (const json_node *c = node_at(p, obj->first_child); c != NULL;
       c = node_at(p, c->next))
    if (c->field == id)
      found = c;
  return found;
}

static bool is_type(const json_node *n, json_type type) {
  return n != NULL && n->type == type;
}

static const char *text_of(const tm_manifest_parser *p, const json_node *n) {
  return p->arena.data + n->text;
}

typedef enum integer_kind {
  INTEGER_OK,
  INTEGER_OVERFLOW,     /* an integer literal beyond int64 */
  INTEGER_NOT_INTEGRAL, /* not a number, or written with fraction/exponent */
} integer_kind;

static integer_kind integer_of(const tm_manifest_parser *p, const json_node *n,
                               int64_t *out) {
  if (!is_type(n, JSON_NUMBER))
    return INTEGER_NOT_INTEGRAL;
  const char *s = text_of(p, n);
  size_t len = n->text_len;
  if (memchr(s, '.', len) || memchr(s, 'e', len) || memchr(s, 'E', len))
    return INTEGER_NOT_INTEGRAL;
  bool negative = len > 0 && s[0] == '-';
  uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  uint64_t value = 0;
  for (size_t i = negative ? 1 : 0; i < len; i++) {
    uint64_t digit = (uint64_t)(s[i] - '0');
    if (value > (limit - digit) / 10)
      return INTEGER_OVERFLOW;
    value = value * 10 + digit;
  }
  *out = negative ? (int64_t)(0 - value) : (int64_t)value;
  return INTEGER_OK;
}

/* ---- The manifest ------------------------------------------------------- */

typedef struct pending_mapping {
  uint32_t entry;
  uint32_t embedded_id;
  tm_manifest_string name;
} pending_mapping;

typedef struct tm_manifest_private tm_manifest_private;
struct tm_manifest_private {
  GStringChunk *strings;
  GHashTable *paths;    /* tm_manifest_string* of files[i].path -> i + 1 */
  GHashTable *machines; /* tm_manifest_string* of machines[i].name -> i + 1 */
  tm_manifest_clocks *clocks;
  tm_manifest_exported_table *tables;
  tm_manifest_remap *remaps;
  uint32_t *declared;
  /* Parse only: each entry's `machine` name, and all `machines` entries. */
  tm_manifest_string *machine_names;
  TM_VEC(pending_mapping) mappings;
};

static guint string_hash(gconstpointer key) {
  const tm_manifest_string *s = key;
  guint h = 2166136261u;
  for (size_t i = 0; i < s->len; i++)
    h = (h ^ (uint8_t)s->str[i]) * 16777619u;
  return h;
}

static gboolean string_equal(gconstpointer a, gconstpointer b) {
  const tm_manifest_string *x = a, *y = b;
  return x->len == y->len && memcmp(x->str, y->str, x->len) == 0;
}

static tm_manifest_string keep(tm_manifest *m, const tm_manifest_parser *p,
                               const json_node *n) {
  const char *s = g_string_chunk_insert_len(m->priv->strings, text_of(p, n),
                                            (gssize)n->text_len);
  return (tm_manifest_string){s, n->text_len};
}

G_GNUC_PRINTF(3, 4)
static bool fail(GError **error, tm_manifest_error_code code, const char *fmt,
                 ...) {
  va_list args;
  va_start(args, fmt);
  char *message = g_strdup_vprintf(fmt, args);
  va_end(args);
  g_set_error_literal(error, TM_MANIFEST_ERROR, code, message);
  g_free(message);
  return false;
}

#define INVALID(...) fail(error, TM_MANIFEST_ERROR_INVALID, __VA_ARGS__)
#define UNRESOLVED(...) fail(error, TM_MANIFEST_ERROR_UNRESOLVED, __VA_ARGS__)

static bool parse_clock_name(const tm_manifest_parser *p, const json_node *n,
                             uint32_t *clock, GError **error) {
  if (!is_type(n, JSON_STRING))
    return INVALID(PREFIX "clock name must be a string");
  const char *s = text_of(p, n);
  for (uint32_t id = 1; id < N_CLOCKS; id++) {
    if (strlen(clock_names[id]) == n->text_len &&
        memcmp(clock_names[id], s, n->text_len) == 0) {
      *clock = id;
      return true;
    }
  }
  return INVALID(PREFIX "unknown clock name: %s. Use one of REALTIME, "
                        "REALTIME_COARSE, MONOTONIC, MONOTONIC_COARSE, "
                        "MONOTONIC_RAW, BOOTTIME.",
                 s);
}

static bool parse_version(tm_manifest *m, const tm_manifest_parser *p,
                          const json_node *meta, GError **error) {
  const json_node *version = member(p, meta, F_VERSION);
  if (version == NULL)
    return INVALID(PREFIX "missing required field: version");
  if (integer_of(p, version, &m->version) != INTEGER_OK)
    return INVALID(PREFIX "version must be an integer");
  if (m->version != 1)
    return INVALID(PREFIX "unsupported version: %" PRId64
                          ". Only version 1 is supported; set \"version\": 1.",
                   m->version);
  return true;
}

static bool parse_trace_time(tm_manifest *m, const tm_manifest_parser *p,
                             const json_node *meta, GError **error) {
  const json_node *tt = member(p, meta, F_TRACE_TIME);
  if (tt == NULL)
    return true;
  if (tt->type != JSON_OBJECT)
    return INVALID(PREFIX "trace_time must be an object");
  const json_node *clock = member(p, tt, F_CLOCK);
  if (clock == NULL)
    return INVALID(PREFIX "trace_time needs a clock");
  if (!parse_clock_name(p, clock, &m->trace_time.clock, error))
    return false;
  const json_node *file = member(p, tt, F_FILE);
  if (file != NULL) {
    if (file->type != JSON_STRING)
      return INVALID(PREFIX "trace_time: file must be a string");
    m->trace_time.file = keep(m, p, file);
  }
  const json_node *machine = member(p, tt, F_MACHINE);
  if (machine != NULL) {
    if (machine->type != JSON_STRING)
      return INVALID(PREFIX "trace_time: machine must be a string");
    m->trace_time.machine = keep(m, p, machine);
  }
  m->trace_time.present = true;
  return true;
}

static bool parse_clocks(tm_manifest *m, const tm_manifest_parser *p,
                         const json_node *n, tm_manifest_clocks *c,
                         GError **error) {
  const json_node *machine = member(p, n, F_MACHINE);
  if (machine != NULL) {
    if (machine->type != JSON_STRING)
      return INVALID(PREFIX "clocks: machine must be a string");
    c->machine_name = keep(m, p, machine);
  }
  const json_node *clock = member(p, n, F_CLOCK);
  if (clock != NULL && !parse_clock_name(p, clock, &c->clock, error))
    return false;
  const json_node *sync = member(p, n, F_SYNC_TO);
  if (sync == NULL)
    return INVALID(PREFIX
                   "clocks: a sync_to block is required. Manual clock handling "
                   "relates this file to a clock in another trace, e.g. "
                   "\"sync_to\": {\"file\": \"other.pb\"}.");
  if (sync->type != JSON_OBJECT)
    return INVALID(PREFIX "clocks: sync_to must be an object");
  const json_node *file = member(p, sync, F_FILE);
  if (!is_type(file, JSON_STRING))
    return INVALID(PREFIX
                   "clocks: sync_to.file is required and must be a string");
  c->sync_file = keep(m, p, file);
  const json_node *sync_machine = member(p, sync, F_MACHINE);
  if (sync_machine != NULL) {
    if (sync_machine->type != JSON_STRING)
      return INVALID(PREFIX "clocks: sync_to.machine must be a string");
    c->sync_machine_name = keep(m, p, sync_machine);
  }
  const json_node *sync_clock = member(p, sync, F_CLOCK);
  if (sync_clock != NULL &&
      !parse_clock_name(p, sync_clock, &c->sync_clock, error))
    return false;
  const json_node *offset = member(p, n, F_OFFSET_NS);
  if (offset != NULL) {
    switch (integer_of(p, offset, &c->offset_ns)) {
    case INTEGER_NOT_INTEGRAL:
      return INVALID(PREFIX "clocks: offset_ns must be an integer");
    case INTEGER_OVERFLOW:
      return INVALID(PREFIX "clocks: offset_ns is out of range");
    case INTEGER_OK:
      if (c->offset_ns == INT64_MIN)
        return INVALID(PREFIX "clocks: offset_ns is out of range");
      /* Not the reference's rule: an offset near INT64_MAX would move
       * every event of the file out of the 64-bit timeline. */
      if (c->offset_ns > TM_MANIFEST_MAX_OFFSET_NS ||
          c->offset_ns < -TM_MANIFEST_MAX_OFFSET_NS)
        return INVALID(PREFIX "clocks: offset_ns is out of range: it must be "
                              "within -%" PRId64 " and %" PRId64
                              " (2^62 ns, about 146 years)",
                       TM_MANIFEST_MAX_OFFSET_NS, TM_MANIFEST_MAX_OFFSET_NS);
      break;
    }
  }
  c->source_machine = c->sync_machine = TM_MANIFEST_NO_MACHINE;
  c->sync_entry = UINT32_MAX;
  c->source_member = c->sync_member = TM_MANIFEST_NO_MEMBER;
  c->source_reading_ns = c->offset_ns < 0 ? -c->offset_ns : 0;
  c->sync_reading_ns = c->offset_ns > 0 ? c->offset_ns : 0;
  return true;
}

static bool parse_exported_table(tm_manifest *m, const tm_manifest_parser *p,
                                 const json_node *n, tm_manifest_file *f,
                                 tm_manifest_exported_table *t,
                                 GError **error) {
  const json_node *name = member(p, n, F_NAME);
  const json_node *rows = member(p, n, F_ROW_COUNT);
  const json_node *columns = member(p, n, F_COLUMNS);
  int64_t row_count = 0;
  integer_kind rows_kind = integer_of(p, rows, &row_count);
  if (integer_of(p, member(p, n, F_FORMAT), &t->format) != INTEGER_OK ||
      !is_type(name, JSON_STRING) || rows_kind == INTEGER_NOT_INTEGRAL ||
      !is_type(columns, JSON_ARRAY))
    return INVALID(PREFIX "__exported_table_schema needs an integer format, a "
                          "string name, an integer row_count and a columns "
                          "array");
  t->name = keep(m, p, name);
  if (rows_kind == INTEGER_OVERFLOW || row_count < 0 ||
      row_count > (int64_t)UINT32_MAX)
    return INVALID(PREFIX "table '%s': invalid row_count", t->name.str);
  t->row_count = (uint32_t)row_count;
  static const field column_fields[] = {F_NAME, F_TYPE, F_NULLABILITY, F_SORT,
                                        F_DUPLICATES};
  for (const json_node *col = node_at(p, columns->first_child); col != NULL;
       col = node_at(p, col->next)) {
    for (size_t i = 0; i < G_N_ELEMENTS(column_fields); i++)
      if (!is_type(member(p, col, column_fields[i]), JSON_STRING))
        return INVALID(PREFIX "table '%s': malformed column entry",
                       t->name.str);
    t->n_columns++;
  }
  f->table = t;
  f->is_exported_table = true;
  return true;
}

static bool parse_machines(tm_manifest *m, const tm_manifest_parser *p,
                           const json_node *n, uint32_t entry,
                           tm_manifest_file *f, GError **error) {
  if (n->type != JSON_ARRAY)
    return INVALID(PREFIX "machines must be an array");
  for (const json_node *e = node_at(p, n->first_child); e != NULL;
       e = node_at(p, e->next)) {
    const json_node *id = member(p, e, F_ID);
    const json_node *name = member(p, e, F_NAME);
    int64_t value = 0;
    integer_kind kind = integer_of(p, id, &value);
    if (!is_type(id, JSON_NUMBER) || !is_type(name, JSON_STRING) ||
        kind == INTEGER_NOT_INTEGRAL)
      return INVALID(PREFIX "machines entries need an integer id and a string "
                            "name, e.g. \"machines\": [{\"id\": 0, \"name\": "
                            "\"phone\"}].");
    if (kind == INTEGER_OVERFLOW || value < 0 || value > (int64_t)UINT32_MAX)
      return INVALID(PREFIX "machines: id must be in [0, 4294967295]");
    if (name->text_len == 0)
      return INVALID(PREFIX "machines: name must be non-empty");
    pending_mapping mapping = {entry, (uint32_t)value, keep(m, p, name)};
    tm_vec_push(&m->priv->mappings, mapping);
    f->is_multi_machine = true;
  }
  return true;
}

static bool parse_file(tm_manifest *m, const tm_manifest_parser *p,
                       const json_node *n, uint32_t entry, size_t *n_clocks,
                       size_t *n_tables, GError **error) {
  tm_manifest_file *f = &m->files[entry];
  f->machine = TM_MANIFEST_NO_MACHINE;
  const json_node *path = member(p, n, F_PATH);
  if (!is_type(path, JSON_STRING))
    return INVALID(PREFIX "files entries must be objects with a string path");
  f->path = keep(m, p, path);

  const json_node *clocks = member(p, n, F_CLOCKS);
  const json_node *machine = member(p, n, F_MACHINE);
  const json_node *machines = member(p, n, F_MACHINES);
  const json_node *table = member(p, n, F_EXPORTED_TABLE);
  if (table != NULL) {
    if (clocks != NULL || machine != NULL || machines != NULL)
      return INVALID(PREFIX "'%s': an exported table is not a trace, so "
                            "__exported_table_schema cannot be combined with "
                            "clocks/machine/machines",
                     f->path.str);
    return parse_exported_table(m, p, table, f, &m->priv->tables[(*n_tables)++],
                                error);
  }
  if (clocks != NULL) {
    if (clocks->type != JSON_OBJECT)
      return INVALID(PREFIX "clocks must be an object");
    tm_manifest_clocks *c = &m->priv->clocks[(*n_clocks)++];
    if (!parse_clocks(m, p, clocks, c, error))
      return false;
    f->clocks = c;
  }
  if (machine != NULL && machines != NULL)
    return INVALID(PREFIX "machine and machines are mutually exclusive. Use "
                          "`machine` for a single-machine file, or `machines` "
                          "to remap a multi-machine proto's embedded ids; not "
                          "both.");
  if (machine != NULL) {
    const json_node *name = member(p, machine, F_NAME);
    if (!is_type(name, JSON_STRING))
      return INVALID(PREFIX "machine must be an object with a string name, "
                            "e.g. \"machine\": {\"name\": \"phone\"}.");
    if (name->text_len == 0)
      return INVALID(PREFIX "machine: name must be non-empty");
    m->priv->machine_names[entry] = keep(m, p, name);
    f->has_machine = true;
  }
  if (machines != NULL && !parse_machines(m, p, machines, entry, f, error))
    return false;
  return true;
}

static size_t count_children(const tm_manifest_parser *p, const json_node *n) {
  size_t count = 0;
  for (const json_node *c = node_at(p, n->first_child); c != NULL;
       c = node_at(p, c->next))
    count++;
  return count;
}

static bool parse_files(tm_manifest *m, const tm_manifest_parser *p,
                        const json_node *meta, GError **error) {
  const json_node *files = member(p, meta, F_FILES);
  if (files == NULL)
    return true;
  if (files->type != JSON_ARRAY)
    return INVALID(PREFIX "files must be an array");
  m->n_files = count_children(p, files);
  size_t with_clocks = 0, with_tables = 0;
  for (const json_node *e = node_at(p, files->first_child); e != NULL;
       e = node_at(p, e->next)) {
    with_clocks += member(p, e, F_CLOCKS) != NULL;
    with_tables += member(p, e, F_EXPORTED_TABLE) != NULL;
  }
  m->files = g_new0(tm_manifest_file, m->n_files);
  m->priv->clocks = g_new0(tm_manifest_clocks, with_clocks);
  m->priv->tables = g_new0(tm_manifest_exported_table, with_tables);
  m->priv->machine_names = g_new0(tm_manifest_string, m->n_files);
  size_t n_clocks = 0, n_tables = 0;
  uint32_t entry = 0;
  for (const json_node *e = node_at(p, files->first_child); e != NULL;
       e = node_at(p, e->next), entry++)
    if (!parse_file(m, p, e, entry, &n_clocks, &n_tables, error))
      return false;
  return true;
}

typedef struct attribute_value {
  tm_manifest_string key; /* into the parser's arena */
  const json_node *value; /* the last one written */
} attribute_value;

static bool parse_attributes(tm_manifest *m, const tm_manifest_parser *p,
                             const json_node *meta, GError **error) {
  const json_node *attrs = member(p, meta, F_ATTRIBUTES);
  if (attrs == NULL)
    return true;
  if (attrs->type != JSON_OBJECT)
    return INVALID(PREFIX "attributes must be an object of string or integer "
                          "values, e.g. \"attributes\": {\"benchmark\": "
                          "\"startup\"}.");
  /* One slot per distinct key, in first-appearance order, holding the
   * last value written for it. */
  size_t n = count_children(p, attrs);
  attribute_value *slots = g_new0(attribute_value, n);
  GHashTable *seen = g_hash_table_new(string_hash, string_equal);
  size_t n_slots = 0;
  for (const json_node *c = node_at(p, attrs->first_child); c != NULL;
       c = node_at(p, c->next)) {
    tm_manifest_string key = {p->arena.data + c->key, c->key_len};
    attribute_value *slot = g_hash_table_lookup(seen, &key);
    if (slot == NULL) {
      slot = &slots[n_slots++];
      slot->key = key;
      g_hash_table_add(seen, &slot->key);
    }
    slot->value = c;
  }
  g_hash_table_destroy(seen);

  bool ok = true;
  m->attributes = g_new0(tm_manifest_attribute, n_slots);
  for (size_t i = 0; i < n_slots && ok; i++) {
    tm_manifest_attribute *a = &m->attributes[i];
    const json_node *value = slots[i].value;
    if (slots[i].key.len == 0) {
      ok = INVALID(PREFIX "attributes: keys must be non-empty");
      break;
    }
    a->key.str = g_string_chunk_insert_len(m->priv->strings, slots[i].key.str,
                                           (gssize)slots[i].key.len);
    a->key.len = slots[i].key.len;
    if (value->type == JSON_STRING) {
      a->str_value = keep(m, p, value);
    } else if (integer_of(p, value, &a->int_value) == INTEGER_OK) {
      a->is_int = true;
    } else {
      ok = INVALID(PREFIX "attributes: '%s' must be a string or an integer",
                   a->key.str);
      break;
    }
    m->n_attributes++;
  }
  g_free(slots);
  return ok;
}

static gint compare_remap(gconstpointer a, gconstpointer b, gpointer unused) {
  (void)unused;
  const tm_manifest_remap *x = a, *y = b;
  return x->embedded_id < y->embedded_id ? -1 : x->embedded_id > y->embedded_id;
}

static int compare_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static uint32_t intern_machine(tm_manifest *m, tm_manifest_string name) {
  gpointer found = g_hash_table_lookup(m->priv->machines, &name);
  if (found != NULL)
    return (uint32_t)(GPOINTER_TO_SIZE(found) - 1);
  uint32_t index = (uint32_t)m->n_machines++;
  tm_manifest_machine *machine = &m->machines[index];
  machine->name = name;
  machine->raw_id = TM_MANIFEST_FIRST_RAW_MACHINE_ID + index;
  g_hash_table_insert(m->priv->machines, &machine->name,
                      GSIZE_TO_POINTER((gsize)index + 1));
  return index;
}

/* One machine per distinct name, in first-appearance order while walking
 * `files` (an entry's `machine` before its `machines`); then each entry's
 * base machine, remap (sorted, first mapping of an id kept) and declared
 * set (sorted, unique). Mappings are in entry order, so each entry's are
 * one contiguous range. */
static void allocate_machines(tm_manifest *m) {
  tm_manifest_private *priv = m->priv;
  size_t n_mappings = priv->mappings.len;
  size_t n_named = n_mappings;
  for (size_t i = 0; i < m->n_files; i++)
    n_named += m->files[i].has_machine;
  m->machines = g_new0(tm_manifest_machine, n_named);
  /* One spare element each: g_new0 of 0 is NULL, and the per-entry
   * pointers below are formed even for entries with nothing in them
   * (NULL + 0 is undefined behaviour; found by fuzz_manifest). */
  priv->remaps = g_new0(tm_manifest_remap, n_mappings + 1);
  priv->declared = g_new0(uint32_t, n_named + 1);

  size_t next_mapping = 0, next_declared = 0;
  for (uint32_t entry = 0; entry < m->n_files; entry++) {
    tm_manifest_file *f = &m->files[entry];
    uint32_t *declared = priv->declared + next_declared;
    size_t n_declared = 0;
    if (f->has_machine) {
      f->machine = intern_machine(m, priv->machine_names[entry]);
      declared[n_declared++] = f->machine;
    }
    tm_manifest_remap *remap = priv->remaps + next_mapping;
    size_t n_remap = 0;
    while (next_mapping < n_mappings &&
           priv->mappings.data[next_mapping].entry == entry) {
      const pending_mapping *pm = &priv->mappings.data[next_mapping++];
      uint32_t machine = intern_machine(m, pm->name);
      remap[n_remap++] = (tm_manifest_remap){pm->embedded_id, machine};
      declared[n_declared++] = machine;
    }
    /* g_qsort_with_data is a stable sort: the first mapping of an id
     * stays first among its equals and is the one kept. */
    if (n_remap > 1)
      g_qsort_with_data(remap, (gint)n_remap, sizeof *remap, compare_remap,
                        NULL);
    size_t unique = 0;
    for (size_t i = 0; i < n_remap; i++)
      if (unique == 0 || remap[unique - 1].embedded_id != remap[i].embedded_id)
        remap[unique++] = remap[i];
    n_remap = unique;
    if (!f->has_machine && n_remap > 0 && remap[0].embedded_id == 0)
      f->machine = remap[0].machine;
    if (n_declared > 1)
      qsort(declared, n_declared, sizeof *declared, compare_u32);
    unique = 0;
    for (size_t i = 0; i < n_declared; i++)
      if (unique == 0 || declared[unique - 1] != declared[i])
        declared[unique++] = declared[i];
    n_declared = unique;
    f->remap = remap;
    f->n_remap = n_remap;
    f->declared = declared;
    f->n_declared = n_declared;
    next_declared += n_declared;
  }
}

/* True if two entries put their file on the same machines: the same
 * `machine`, or the same `machines` mapping, or neither. */
static bool same_machines(const tm_manifest_file *a, const tm_manifest_file *b) {
  if (a->has_machine != b->has_machine || a->machine != b->machine ||
      a->n_remap != b->n_remap)
    return false;
  for (size_t i = 0; i < a->n_remap; i++)
    if (a->remap[i].embedded_id != b->remap[i].embedded_id ||
        a->remap[i].machine != b->remap[i].machine)
      return false;
  return true;
}

/* Marks every entry whose path an earlier entry already has. A repeated
 * path uses the first entry (as the reference), but not when the two put
 * the file on different machines: the reference would silently drop the
 * second attribution, which is never what the writer meant. */
static bool index_paths(tm_manifest *m, GError **error) {
  for (size_t i = 0; i < m->n_files; i++) {
    tm_manifest_file *f = &m->files[i];
    if (f->path.str == NULL)
      continue;
    gpointer first = g_hash_table_lookup(m->priv->paths, &f->path);
    if (first == NULL) {
      g_hash_table_insert(m->priv->paths, &f->path, GSIZE_TO_POINTER(i + 1));
      continue;
    }
    f->shadowed = true;
    if (!same_machines(&m->files[GPOINTER_TO_SIZE(first) - 1], f))
      return INVALID(PREFIX "files: '%s' is listed twice with different "
                            "machines. A file's data is on one set of "
                            "machines: list it once, with `machine` or "
                            "`machines`.",
                     f->path.str);
  }
  return true;
}

static tm_manifest *manifest_new(void) {
  tm_manifest *m = g_new0(tm_manifest, 1);
  m->priv = g_new0(tm_manifest_private, 1);
  m->priv->strings = g_string_chunk_new(4096);
  m->priv->paths = g_hash_table_new(string_hash, string_equal);
  m->priv->machines = g_hash_table_new(string_hash, string_equal);
  m->trace_time.machine_index = TM_MANIFEST_NO_MACHINE;
  return m;
}

void manifest_free(tm_manifest *m) {
  if (m == NULL)
    return;
  tm_manifest_private *priv = m->priv;
  g_hash_table_destroy(priv->paths);
  g_hash_table_destroy(priv->machines);
  g_string_chunk_free(priv->strings);
  g_free(priv->clocks);
  g_free(priv->tables);
  g_free(priv->remaps);
  g_free(priv->declared);
  g_free(priv->machine_names);
  tm_vec_free(&priv->mappings);
  g_free(priv);
  g_free(m->files);
  g_free(m->attributes);
  g_free(m->machines);
  g_free(m);
}

/* Step 1 on a complete tree, in the reference's order. */
static tm_manifest *manifest_from_tree(const tm_manifest_parser *p,
                                       GError **error) {
  tm_manifest *m = manifest_new();
  const json_node *meta = member(p, node_at(p, p->root), F_PERFETTO_MANIFEST);
  bool ok = is_type(meta, JSON_OBJECT)
                ? parse_version(m, p, meta, error) &&
                      parse_trace_time(m, p, meta, error) &&
                      parse_files(m, p, meta, error) &&
                      parse_attributes(m, p, meta, error)
                : INVALID(PREFIX "expected a JSON object with a top-level "
                                 "perfetto_manifest key");
  if (!ok) {
    manifest_free(m);
    return NULL;
  }
  allocate_machines(m);
  ok = index_paths(m, error);
  /* Only needed while parsing. */
  g_clear_pointer(&m->priv->machine_names, g_free);
  tm_vec_free(&m->priv->mappings);
  if (!ok) {
    manifest_free(m);
    return NULL;
  }
  return m;
}

tm_manifest *manifest_parser_finish(tm_manifest_parser *p, GError **error) {
  if (p->done) {
    g_set_error_literal(error, TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_JSON,
                        "the manifest parser has already stopped");
    return NULL;
  }
  if (p->fed == 0) {
    p->done = true;
    g_set_error_literal(error, TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_JSON,
                        "Empty JSON input");
    return NULL;
  }
  if (yajl_complete_parse(p->yajl) != yajl_status_ok) {
    set_json_error(p, NULL, 0, error);
    return NULL;
  }
  tm_manifest *m = manifest_from_tree(p, error);
  /* The tree is not needed any more; the caller may keep the parser. */
  p->done = true;
  tm_vec_free(&p->nodes);
  tm_vec_free(&p->arena);
  return m;
}

tm_manifest *manifest_parse(const uint8_t *data, size_t len, GError **error) {
  tm_manifest_parser *p = manifest_parser_new();
  tm_manifest *m = NULL;
  if (manifest_parser_feed(p, data, len, error))
    m = manifest_parser_finish(p, error);
  manifest_parser_free(p);
  return m;
}

/* ---- Step 2: references ---------------------------------------------- */

static const tm_manifest_file *
find_entry(const tm_manifest *m, tm_manifest_string path, uint32_t *index) {
  gpointer found = g_hash_table_lookup(m->priv->paths, &path);
  if (found == NULL)
    return NULL;
  *index = (uint32_t)(GPOINTER_TO_SIZE(found) - 1);
  return &m->files[*index];
}

static bool declares(const tm_manifest *m, const tm_manifest_file *f,
                     tm_manifest_string name, uint32_t *machine) {
  gpointer found = g_hash_table_lookup(m->priv->machines, &name);
  if (found == NULL)
    return false;
  uint32_t index = (uint32_t)(GPOINTER_TO_SIZE(found) - 1);
  if (f->n_declared == 0 || bsearch(&index, f->declared, f->n_declared,
                                    sizeof *f->declared, compare_u32) == NULL)
    return false;
  *machine = index;
  return true;
}

/* The machine a reference (`file`, `machine`) names, with the labels of
 * its two fields for the messages (#37-#40). `file` or `machine` is
 * present. */
static bool resolve_reference(const tm_manifest *m, const char *file_label,
                              const char *machine_label,
                              tm_manifest_string file,
                              tm_manifest_string machine, uint32_t *out_machine,
                              uint32_t *out_entry, GError **error) {
  if (file.str == NULL)
    return UNRESOLVED(PREFIX "%s '%s' needs %s too: a machine name alone is "
                             "ambiguous because embedded machine ids are "
                             "scoped to their trace.",
                      machine_label, machine.str, file_label);
  const tm_manifest_file *entry = find_entry(m, file, out_entry);
  if (entry == NULL)
    return UNRESOLVED(PREFIX "%s names unknown file '%s'. It must match the "
                             "`path` of an entry in the `files` array.",
                      file_label, file.str);
  if (machine.str == NULL) {
    if (entry->is_multi_machine)
      return UNRESOLVED(PREFIX "%s '%s' is a multi-machine trace; also name "
                               "the machine with %s.",
                        file_label, file.str, machine_label);
    *out_machine = entry->machine;
    return true;
  }
  if (!declares(m, entry, machine, out_machine))
    return UNRESOLVED(PREFIX "%s '%s' is not a machine declared by file '%s'.",
                      machine_label, machine.str, file.str);
  return true;
}

/* The index in the resolve paths of the first file named `path`. */
static bool find_member(GHashTable *members, tm_manifest_string path,
                        size_t *out, GError **error) {
  gpointer found = g_hash_table_lookup(members, &path);
  if (found == NULL) {
    g_propagate_error(error, manifest_error_unresolved_member(path.str));
    return false;
  }
  *out = GPOINTER_TO_SIZE(found) - 1;
  return true;
}

static bool resolve_override(const tm_manifest *m, const tm_manifest_file *f,
                             tm_manifest_clocks *c, GHashTable *members,
                             GError **error) {
  if (c->machine_name.str == NULL) {
    if (f->is_multi_machine)
      return UNRESOLVED(PREFIX "clocks: file '%s' is a multi-machine trace; "
                               "name which machine the clock is on with "
                               "clocks: machine.",
                        f->path.str);
    c->source_machine = f->machine;
  } else if (!declares(m, f, c->machine_name, &c->source_machine)) {
    return UNRESOLVED(PREFIX "clocks: machine '%s' is not a machine declared "
                             "by file '%s'.",
                      c->machine_name.str, f->path.str);
  }
  if (!resolve_reference(m, "clocks: sync_to.file", "clocks: sync_to.machine",
                         c->sync_file, c->sync_machine_name, &c->sync_machine,
                         &c->sync_entry, error))
    return false;
  if (c->clock == 0 && !find_member(members, f->path, &c->source_member, error))
    return false;
  if (c->sync_clock == 0 &&
      !find_member(members, c->sync_file, &c->sync_member, error))
    return false;
  return true;
}

/* The longest chain a cycle message spells out. */
#define CYCLE_NAMES_MAX 8

/* The entry the applied override of `entry` leads to, if it has one and
 * it starts from `machine` (the override's source machine); else
 * m->n_files. An override relating a file to itself (e.g. two embedded
 * machines of one proto, or two of its clocks) leads nowhere else: it is
 * no cycle of files, and the clock graph refuses the one that names the
 * same clock twice. */
static size_t sync_next(const tm_manifest *m, size_t entry, uint32_t machine,
                        uint32_t *next_machine) {
  const tm_manifest_file *f = &m->files[entry];
  const tm_manifest_clocks *c = f->clocks;
  if (f->shadowed || c == NULL || c->sync_entry >= m->n_files ||
      c->sync_entry == entry || c->source_machine != machine)
    return m->n_files;
  *next_machine = c->sync_machine;
  return c->sync_entry;
}

/* Fails if following sync_to from an applied override leads back to the
 * (file, machine) it started from: the files of such a cycle are each
 * placed relative to another of them and none to anything else, and their
 * offsets may contradict one another (the reference takes cycles as plain
 * graph edges). A (file, machine) has at most one override starting from
 * it, so this walks a functional graph: linear in the number of entries.
 * Machines matter only for multi-machine files: relay.pb's vm synced to
 * phone.pb, and phone.pb synced to relay.pb's host, is no cycle. */
static bool check_sync_cycles(const tm_manifest *m, GError **error) {
  /* By entry, for its override's source: 0 unseen, 1 on the walk in
   * progress, 2 known to end outside any cycle. */
  guint8 *mark = g_new0(guint8, m->n_files);
  bool ok = true;
  for (size_t start = 0; start < m->n_files && ok; start++) {
    const tm_manifest_clocks *c = m->files[start].clocks;
    if (c == NULL || mark[start] != 0)
      continue;
    size_t i = start;
    uint32_t machine = c->source_machine;
    size_t next;
    uint32_t next_machine = 0;
    while ((next = sync_next(m, i, machine, &next_machine)) < m->n_files) {
      mark[i] = 1;
      i = next;
      machine = next_machine;
      if (mark[i] != 0)
        break;
    }
    if (next < m->n_files && mark[i] == 1 &&
        sync_next(m, i, machine, &next_machine) < m->n_files) {
      /* i is on a cycle: spell it out from i. */
      GString *chain = g_string_new(NULL);
      size_t k = i, n = 0;
      uint32_t km = machine;
      do {
        g_string_append_printf(chain, "'%s' -> ", m->files[k].path.str);
        k = sync_next(m, k, km, &km);
      } while (k != i && ++n < CYCLE_NAMES_MAX);
      g_string_append(chain, k == i ? "" : "... -> ");
      g_string_append_printf(chain, "'%s'", m->files[i].path.str);
      ok = UNRESOLVED(PREFIX "clocks: sync_to forms a cycle: %s. Each file "
                             "must lead, through sync_to, to one that has no "
                             "sync_to of its own.",
                      chain->str);
      g_string_free(chain, TRUE);
    }
    /* Everything this walk marked ends outside a cycle, or was reported. */
    i = start;
    machine = c->source_machine;
    while (mark[i] == 1) {
      mark[i] = 2;
      next = sync_next(m, i, machine, &machine);
      if (next >= m->n_files)
        break;
      i = next;
    }
  }
  g_free(mark);
  return ok;
}

bool manifest_resolve(tm_manifest *m, const char *const *paths, size_t n_paths,
                      GError **error) {
  g_return_val_if_fail(!m->resolved, false);
  bool ok = false;
  tm_manifest_string *names = g_new0(tm_manifest_string, n_paths);
  GHashTable *members = g_hash_table_new(string_hash, string_equal);
  for (size_t i = 0; i < n_paths; i++) {
    if (paths[i] == NULL)
      continue;
    names[i] = (tm_manifest_string){paths[i], strlen(paths[i])};
    if (!g_hash_table_contains(members, &names[i]))
      g_hash_table_insert(members, &names[i], GSIZE_TO_POINTER(i + 1));
  }

  for (size_t i = 0; i < m->n_files; i++) {
    const tm_manifest_file *f = &m->files[i];
    if (f->is_exported_table && !g_hash_table_contains(members, &f->path)) {
      UNRESOLVED(PREFIX "table member '%s' is declared but not present in the "
                        "archive",
                 f->path.str);
      goto out;
    }
  }

  tm_manifest_trace_time *tt = &m->trace_time;
  if (tt->present) {
    if (tt->file.str != NULL || tt->machine.str != NULL) {
      uint32_t entry;
      if (!resolve_reference(m, "trace_time: file", "trace_time: machine",
                             tt->file, tt->machine, &tt->machine_index, &entry,
                             error))
        goto out;
    } else {
      tt->implicit_row_zero = true;
      tt->machine_index = m->n_machines > 0 ? 0 : TM_MANIFEST_NO_MACHINE;
    }
  }

  for (size_t i = 0; i < m->n_files; i++) {
    const tm_manifest_file *f = &m->files[i];
    if (f->clocks == NULL)
      continue;
    tm_manifest_clocks *c = &m->priv->clocks[f->clocks - m->priv->clocks];
    if (!resolve_override(m, f, c, members, error))
      goto out;
  }
  if (!check_sync_cycles(m, error))
    goto out;
  m->resolved = true;
  ok = true;

out:
  g_hash_table_destroy(members);
  g_free(names);
  return ok;
}

/* ---- Lookups for the session -------------------------------------------- */

const tm_manifest_file *manifest_borrow_file(const tm_manifest *m,
                                             const char *path) {
  uint32_t index;
  return find_entry(m, (tm_manifest_string){path, strlen(path)}, &index);
}

bool manifest_file_remap(const tm_manifest_file *f, uint32_t embedded_id,
                         uint32_t *machine) {
  tm_manifest_remap key = {embedded_id, 0};
  size_t lo = 0, hi = f->n_remap;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (compare_remap(&f->remap[mid], &key, NULL) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == f->n_remap || f->remap[lo].embedded_id != embedded_id)
    return false;
  *machine = f->remap[lo].machine;
  return true;
}

bool manifest_file_has_override(const tm_manifest_file *f) {
  return f->clocks != NULL || f->has_machine;
}

bool manifest_file_is_pinned(const tm_manifest_file *f) {
  return f->clocks != NULL && f->clocks->clock == 0;
}

/* ---- Errors raised outside the manifest (§10.2, #26) ------------------ */

static GError *apply_error(const char *message) {
  return g_error_new_literal(TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_APPLY,
                             message);
}

GError *manifest_error_unresolved_member(const char *path) {
  return g_error_new(TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_UNRESOLVED,
                     PREFIX "clocks: could not resolve file '%s'. It must "
                            "match the `path` of an entry in the `files` "
                            "array.",
                     path);
}

GError *manifest_error_multiple_manifests(void) {
  return apply_error("multiple perfetto_manifest files in archive");
}

GError *manifest_error_not_first(void) {
  return apply_error(
      "perfetto_manifest file must be the first trace file in the input");
}

GError *manifest_error_override_on_container(const char *path) {
  return g_error_new(TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_APPLY,
                     PREFIX "overrides are not supported for trace files "
                            "which are themselves archives or "
                            "perfetto_manifest files: %s",
                     path);
}

GError *manifest_error_pinned_clock_snapshot(void) {
  return apply_error(PREFIX
                     "clock overrides require the trace to use a single clock");
}

GError *manifest_error_undeclared_machine(uint32_t machine_id) {
  return g_error_new(TM_MANIFEST_ERROR, TM_MANIFEST_ERROR_APPLY,
                     PREFIX "machines: trace has a packet from undeclared "
                            "machine id %" PRIu32,
                     machine_id);
}

GError *manifest_error_machine_on_multi_machine_file(void) {
  return apply_error(
      PREFIX "a `machine` override attributes the file to one machine, but "
             "the file contains packets from multiple machines. Replace "
             "`machine` with a `machines` block that maps each embedded "
             "machine_id to a named machine, e.g. \"machines\": [{\"id\": 0, "
             "\"name\": \"phone\"}, {\"id\": 7, \"name\": \"vm\"}].");
}

GError *manifest_error_clocks_on_multi_machine_file(void) {
  return apply_error(
      PREFIX "a `clocks` override applies only to a single-machine file, but "
             "the file contains packets from multiple machines. Remove the "
             "`clocks` override and let the trace's own remote clock "
             "snapshots align the machines; if you need to anchor a specific "
             "embedded machine, split it into its own file and override "
             "that.");
}
