/*
 * SPAN_JOIN operator tables (see span_join.h).
 *
 * A query reads both inputs, sorts each by (partition, ts) in C (cheaper
 * than SQLite's ORDER BY, which serialises every row into its sorter),
 * then sweeps each partition's boundaries once: between two consecutive
 * boundaries at most one span of each side is active (spans of a side do
 * not overlap), and consecutive pieces with the same pair are merged into
 * one output row.
 *
 * The other columns' values are kept in one array of cells per side:
 * integers, reals and NULLs inline, only text and blobs as copies, so a
 * span costs no allocation of its own.
 */
#include "sql/span_join.h"

#include <glib.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef enum join_kind { JOIN_INNER, JOIN_LEFT, JOIN_OUTER } join_kind;

typedef struct side {
  char *table;
  char *partition; /* NULL: not partitioned */
  GPtrArray *columns; /* char*: every column but ts, dur, partition */
} side;

typedef struct span_vtab {
  sqlite3_vtab base;
  sqlite3 *db;
  join_kind kind;
  side sides[2];
  char *partition; /* the output partition column, or NULL */
} span_vtab;

/* One value of an input column. */
typedef struct cell {
  int type; /* SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_NULL, else a copy */
  union {
    int64_t i;
    double d;
    sqlite3_value *copy; /* text, blob */
  } u;
} cell;

/* One input span; its columns are cells[first_cell ...] of its side. */
typedef struct span {
  int64_t ts, end, part;
  size_t first_cell;
} span;

typedef struct out_row {
  int64_t ts, end, part;
  int a, b; /* span index in each side's array, -1 for none */
} out_row;

typedef struct span_cursor {
  sqlite3_vtab_cursor base;
  GArray *spans[2]; /* span */
  GArray *cells[2]; /* cell, the side's columns for each span in turn */
  GArray *rows;     /* out_row */
  guint pos;
} span_cursor;

static void side_clear(side *s) {
  g_free(s->table);
  g_free(s->partition);
  if (s->columns)
    g_ptr_array_free(s->columns, TRUE);
  memset(s, 0, sizeof *s);
}

static void set_err(char **err, const char *format, ...) G_GNUC_PRINTF(2, 3);
static void set_err(char **err, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  char *m = g_strdup_vprintf(format, ap);
  va_end(ap);
  *err = sqlite3_mprintf("%s", m);
  g_free(m);
}

/* "name [PARTITIONED col]" */
static bool parse_side(const char *arg, side *s, char **err) {
  char *text = g_strstrip(g_strdup(arg));
  gchar **words = g_strsplit_set(text, " \t\n", -1);
  g_free(text);
  GPtrArray *w = g_ptr_array_new();
  for (gchar **p = words; *p; p++)
    if (**p)
      g_ptr_array_add(w, *p);
  bool ok = false;
  if (w->len == 1 || (w->len == 3 && g_ascii_strcasecmp(w->pdata[1],
                                                         "PARTITIONED") == 0)) {
    s->table = g_strdup(w->pdata[0]);
    s->partition = w->len == 3 ? g_strdup(w->pdata[2]) : NULL;
    ok = true;
  } else {
    set_err(err, "SPAN_JOIN: expected 'table [PARTITIONED column]', got '%s'",
            arg);
  }
  g_ptr_array_free(w, TRUE);
  g_strfreev(words);
  return ok;
}

static bool read_columns(sqlite3 *db, side *s, char **err) {
  char *sql = g_strdup_printf("SELECT * FROM %s LIMIT 0", s->table);
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, NULL);
  g_free(sql);
  if (rc != SQLITE_OK) {
    set_err(err, "SPAN_JOIN: cannot read %s: %s", s->table, sqlite3_errmsg(db));
    sqlite3_finalize(stmt);
    return false;
  }
  bool has_ts = false, has_dur = false, has_part = !s->partition;
  s->columns = g_ptr_array_new_with_free_func(g_free);
  for (int i = 0; i < sqlite3_column_count(stmt); i++) {
    const char *name = sqlite3_column_name(stmt, i);
    if (g_ascii_strcasecmp(name, "ts") == 0)
      has_ts = true;
    else if (g_ascii_strcasecmp(name, "dur") == 0)
      has_dur = true;
    else if (s->partition && g_ascii_strcasecmp(name, s->partition) == 0)
      has_part = true;
    else
      g_ptr_array_add(s->columns, g_strdup(name));
  }
  sqlite3_finalize(stmt);
  if (!has_ts || !has_dur) {
    set_err(err, "SPAN_JOIN: %s has no %s column", s->table,
            has_ts ? "dur" : "ts");
    return false;
  }
  if (!has_part) {
    set_err(err, "SPAN_JOIN: %s has no partition column %s", s->table,
            s->partition);
    return false;
  }
  return true;
}

static int span_create(sqlite3 *db, void *aux, int argc,
                       const char *const *argv, sqlite3_vtab **out,
                       char **err) {
  if (argc != 5) {
    set_err(err, "SPAN_JOIN: expected 2 tables, got %d", argc - 3);
    return SQLITE_ERROR;
  }
  span_vtab *vtab = g_new0(span_vtab, 1);
  vtab->db = db;
  vtab->kind = (join_kind)GPOINTER_TO_INT(aux);
  GString *schema = NULL;
  for (int i = 0; i < 2; i++)
    if (!parse_side(argv[3 + i], &vtab->sides[i], err) ||
        !read_columns(db, &vtab->sides[i], err))
      goto fail;
  side *a = &vtab->sides[0], *b = &vtab->sides[1];
  if (a->partition && b->partition &&
      g_ascii_strcasecmp(a->partition, b->partition) != 0) {
    set_err(err, "SPAN_JOIN: both tables must be partitioned by the same "
                 "column (%s, %s)",
            a->partition, b->partition);
    goto fail;
  }
  vtab->partition = g_strdup(a->partition ? a->partition : b->partition);
  for (guint i = 0; i < a->columns->len; i++)
    for (guint j = 0; j < b->columns->len; j++)
      if (g_ascii_strcasecmp(a->columns->pdata[i], b->columns->pdata[j]) == 0) {
        set_err(err, "SPAN_JOIN: column %s is in both %s and %s",
                (char *)a->columns->pdata[i], a->table, b->table);
        goto fail;
      }
  /* An unpartitioned side must not have a column named like the
   * partition: it would clash with the output's. */
  for (int s = 0; s < 2 && vtab->partition; s++)
    for (guint i = 0; i < vtab->sides[s].columns->len; i++)
      if (g_ascii_strcasecmp(vtab->sides[s].columns->pdata[i],
                             vtab->partition) == 0) {
        set_err(err, "SPAN_JOIN: %s has a column %s but is not partitioned "
                     "by it",
                vtab->sides[s].table, vtab->partition);
        goto fail;
      }
  schema = g_string_new("CREATE TABLE x(ts INTEGER, dur INTEGER");
  if (vtab->partition)
    g_string_append_printf(schema, ", \"%s\" INTEGER", vtab->partition);
  for (int s = 0; s < 2; s++)
    for (guint i = 0; i < vtab->sides[s].columns->len; i++)
      g_string_append_printf(schema, ", \"%s\"",
                             (char *)vtab->sides[s].columns->pdata[i]);
  g_string_append_c(schema, ')');
  if (sqlite3_declare_vtab(db, schema->str) != SQLITE_OK) {
    set_err(err, "SPAN_JOIN: %s", sqlite3_errmsg(db));
    goto fail;
  }
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  g_string_free(schema, TRUE);
  *out = &vtab->base;
  return SQLITE_OK;
fail:
  if (schema)
    g_string_free(schema, TRUE);
  side_clear(&vtab->sides[0]);
  side_clear(&vtab->sides[1]);
  g_free(vtab->partition);
  g_free(vtab);
  return SQLITE_ERROR;
}

static int span_disconnect(sqlite3_vtab *base) {
  span_vtab *vtab = (span_vtab *)base;
  side_clear(&vtab->sides[0]);
  side_clear(&vtab->sides[1]);
  g_free(vtab->partition);
  g_free(vtab);
  return SQLITE_OK;
}

enum { COL_TS = 0, COL_DUR = 1 };

static int span_best_index(sqlite3_vtab *base, sqlite3_index_info *info) {
  span_vtab *vtab = (span_vtab *)base;
  info->idxNum = 0;
  if (vtab->partition)
    for (int i = 0; i < info->nConstraint; i++) {
      const struct sqlite3_index_constraint *c = &info->aConstraint[i];
      if (c->usable && c->iColumn == 2 && c->op == SQLITE_INDEX_CONSTRAINT_EQ) {
        info->aConstraintUsage[i].argvIndex = 1;
        info->idxNum = 1; /* filtered to one partition */
        break;
      }
    }
  info->estimatedCost = info->idxNum ? 1e4 : 1e6;
  return SQLITE_OK;
}

static int span_open(sqlite3_vtab *base, sqlite3_vtab_cursor **out) {
  (void)base;
  span_cursor *cur = g_new0(span_cursor, 1);
  for (int s = 0; s < 2; s++) {
    cur->spans[s] = g_array_new(FALSE, FALSE, sizeof(span));
    cur->cells[s] = g_array_new(FALSE, FALSE, sizeof(cell));
  }
  cur->rows = g_array_new(FALSE, FALSE, sizeof(out_row));
  *out = &cur->base;
  return SQLITE_OK;
}

static void cells_clear(GArray *cells) {
  for (guint i = 0; i < cells->len; i++) {
    cell *c = &g_array_index(cells, cell, i);
    if (c->type != SQLITE_INTEGER && c->type != SQLITE_FLOAT &&
        c->type != SQLITE_NULL)
      sqlite3_value_free(c->u.copy);
  }
  g_array_set_size(cells, 0);
}

static void cursor_clear(span_cursor *cur, span_vtab *vtab) {
  (void)vtab;
  for (int s = 0; s < 2; s++) {
    g_array_set_size(cur->spans[s], 0);
    cells_clear(cur->cells[s]);
  }
  g_array_set_size(cur->rows, 0);
  cur->pos = 0;
}

static int span_close(sqlite3_vtab_cursor *base) {
  span_cursor *cur = (span_cursor *)base;
  cursor_clear(cur, (span_vtab *)base->pVtab);
  for (int s = 0; s < 2; s++) {
    g_array_free(cur->spans[s], TRUE);
    g_array_free(cur->cells[s], TRUE);
  }
  g_array_free(cur->rows, TRUE);
  g_free(cur);
  return SQLITE_OK;
}

static int compare_spans(const void *x, const void *y) {
  const span *a = x, *b = y;
  if (a->part != b->part)
    return a->part < b->part ? -1 : 1;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  return a->end < b->end ? -1 : a->end > b->end;
}

/* Sorts spans by (partition, ts, end). Partitions are usually small
 * integers (utid, cpu) and rows usually come in ts order, so: a stable
 * counting sort by partition when their range is small, then a sort of
 * each partition's run only if it is not in order already; a plain sort
 * otherwise. */
static void sort_spans(GArray *spans) {
  size_t n = spans->len;
  span *sp = (span *)(void *)spans->data;
  if (n < 2)
    return;
  int64_t lo = sp[0].part, hi = sp[0].part;
  for (size_t i = 1; i < n; i++) {
    lo = MIN(lo, sp[i].part);
    hi = MAX(hi, sp[i].part);
  }
  uint64_t range = (uint64_t)hi - (uint64_t)lo;
  if (range >= 4 * (uint64_t)n + 1024) {
    qsort(sp, n, sizeof *sp, compare_spans);
    return;
  }
  size_t *start = g_new0(size_t, (size_t)range + 2);
  for (size_t i = 0; i < n; i++)
    start[(uint64_t)sp[i].part - (uint64_t)lo + 1]++;
  for (size_t k = 1; k <= (size_t)range + 1; k++)
    start[k] += start[k - 1];
  span *sorted = g_new(span, n);
  for (size_t i = 0; i < n; i++)
    sorted[start[(uint64_t)sp[i].part - (uint64_t)lo]++] = sp[i];
  memcpy(sp, sorted, n * sizeof *sp);
  g_free(sorted);
  g_free(start);
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    bool in_order = true;
    for (; j < n && sp[j].part == sp[i].part; j++)
      if (compare_spans(&sp[j - 1], &sp[j]) > 0)
        in_order = false;
    if (!in_order)
      qsort(sp + i, j - i, sizeof *sp, compare_spans);
    i = j;
  }
}

/* Reads one side's spans into `out` (their columns into `cells`), sorted
 * by (partition, ts). */
static int load_side(span_vtab *vtab, int s, sqlite3_value *part_filter,
                     GArray *out, GArray *cells) {
  side *sd = &vtab->sides[s];
  GString *sql = g_string_new("SELECT ts, dur");
  g_string_append_printf(sql, ", %s%s%s", sd->partition ? "\"" : "",
                         sd->partition ? sd->partition : "0",
                         sd->partition ? "\"" : "");
  for (guint i = 0; i < sd->columns->len; i++)
    g_string_append_printf(sql, ", \"%s\"", (char *)sd->columns->pdata[i]);
  g_string_append_printf(sql, " FROM %s WHERE dur > 0", sd->table);
  if (sd->partition) {
    g_string_append_printf(sql, " AND \"%s\" IS NOT NULL", sd->partition);
    if (part_filter)
      g_string_append_printf(sql, " AND \"%s\" = ?1", sd->partition);
  }
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2(vtab->db, sql->str, -1, &stmt, NULL);
  g_string_free(sql, TRUE);
  if (rc != SQLITE_OK)
    goto fail;
  if (part_filter && sd->partition)
    sqlite3_bind_value(stmt, 1, part_filter);
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    span sp;
    sp.ts = sqlite3_column_int64(stmt, 0);
    sp.end = sp.ts + sqlite3_column_int64(stmt, 1);
    sp.part = sqlite3_column_int64(stmt, 2);
    sp.first_cell = cells->len;
    for (guint i = 0; i < sd->columns->len; i++) {
      cell c = {.type = sqlite3_column_type(stmt, 3 + (int)i)};
      if (c.type == SQLITE_INTEGER) {
        c.u.i = sqlite3_column_int64(stmt, 3 + (int)i);
      } else if (c.type == SQLITE_FLOAT) {
        c.u.d = sqlite3_column_double(stmt, 3 + (int)i);
      } else if (c.type != SQLITE_NULL) {
        c.u.copy = sqlite3_value_dup(sqlite3_column_value(stmt, 3 + (int)i));
        if (!c.u.copy) {
          rc = SQLITE_NOMEM;
          break;
        }
      }
      g_array_append_val(cells, c);
    }
    if (rc == SQLITE_NOMEM)
      break;
    g_array_append_val(out, sp);
  }
  if (rc != SQLITE_DONE)
    goto fail;
  sqlite3_finalize(stmt);
  sort_spans(out);
  return SQLITE_OK;
fail:
  sqlite3_free(vtab->base.zErrMsg);
  vtab->base.zErrMsg = sqlite3_mprintf("SPAN_JOIN: reading %s: %s", sd->table,
                                       sqlite3_errmsg(vtab->db));
  sqlite3_finalize(stmt);
  return SQLITE_ERROR;
}

static int compare_int64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return a < b ? -1 : a > b;
}

/* The boundaries (ts, end, ts, end, ...) of n spans sorted by ts into t;
 * true if they ascend, as they do when the spans do not overlap. */
static bool span_bounds(const span *spans, size_t n, int64_t *t) {
  bool ascending = true;
  for (size_t i = 0; i < n; i++) {
    t[2 * i] = spans[i].ts;
    t[2 * i + 1] = spans[i].end;
    if (i > 0 && spans[i].ts < spans[i - 1].end)
      ascending = false;
  }
  return ascending;
}

/* Joins a[na] and b[nb] (sorted by ts, one partition) into rows. */
static void join_partition(join_kind kind, int64_t part, const span *a,
                           int a_base, size_t na, const span *b, int b_base,
                           size_t nb, GArray *rows) {
  size_t nt = 2 * (na + nb);
  if (nt == 0)
    return;
  /* Every boundary of both sides, in order: a merge of the two sides'
   * ascending lists, or (spans of a side overlap: the documented
   * restriction broken) a sort. */
  int64_t *ta = g_new(int64_t, 2 * na + 1), *tb = g_new(int64_t, 2 * nb + 1);
  int64_t *t = g_new(int64_t, nt);
  bool ascending = span_bounds(a, na, ta);
  ascending = span_bounds(b, nb, tb) && ascending;
  if (ascending) {
    size_t i = 0, j = 0, k = 0;
    while (i < 2 * na || j < 2 * nb)
      t[k++] = j >= 2 * nb || (i < 2 * na && ta[i] <= tb[j]) ? ta[i++] : tb[j++];
  } else {
    memcpy(t, ta, 2 * na * sizeof *t);
    memcpy(t + 2 * na, tb, 2 * nb * sizeof *t);
    qsort(t, nt, sizeof *t, compare_int64);
  }
  g_free(ta);
  g_free(tb);
  size_t ia = 0, ib = 0;
  guint first_row = rows->len;
  for (size_t i = 0; i + 1 < nt; i++) {
    int64_t lo = t[i], hi = t[i + 1];
    if (lo == hi)
      continue;
    while (ia < na && a[ia].end <= lo)
      ia++;
    while (ib < nb && b[ib].end <= lo)
      ib++;
    int ra = ia < na && a[ia].ts <= lo ? (int)ia + a_base : -1;
    int rb = ib < nb && b[ib].ts <= lo ? (int)ib + b_base : -1;
    bool keep = kind == JOIN_INNER   ? ra >= 0 && rb >= 0
                : kind == JOIN_LEFT  ? ra >= 0
                                     : ra >= 0 || rb >= 0;
    if (!keep)
      continue;
    if (rows->len > first_row) {
      out_row *last = &g_array_index(rows, out_row, rows->len - 1);
      if (last->end == lo && last->a == ra && last->b == rb) {
        last->end = hi;
        continue;
      }
    }
    out_row r = {lo, hi, part, ra, rb};
    g_array_append_val(rows, r);
  }
  g_free(t);
}

static int span_filter(sqlite3_vtab_cursor *base, int idx_num,
                       const char *idx_str, int argc, sqlite3_value **argv) {
  (void)idx_str;
  span_cursor *cur = (span_cursor *)base;
  span_vtab *vtab = (span_vtab *)base->pVtab;
  cursor_clear(cur, vtab);
  sqlite3_value *filter = idx_num == 1 && argc > 0 ? argv[0] : NULL;
  for (int s = 0; s < 2; s++) {
    int rc = load_side(vtab, s, filter, cur->spans[s], cur->cells[s]);
    if (rc != SQLITE_OK)
      return rc;
  }
  const span *a = (const span *)(void *)cur->spans[0]->data;
  const span *b = (const span *)(void *)cur->spans[1]->data;
  size_t na = cur->spans[0]->len, nb = cur->spans[1]->len;
  bool pa = vtab->sides[0].partition != NULL;
  bool pb = vtab->sides[1].partition != NULL;
  if (!pa && !pb) {
    join_partition(vtab->kind, 0, a, 0, na, b, 0, nb, cur->rows);
    return SQLITE_OK;
  }
  /* Walk the partitions of the partitioned side(s) in order; an
   * unpartitioned side takes part in every one. */
  size_t i = 0, j = 0;
  while ((pa && i < na) || (pb && j < nb)) {
    int64_t part;
    if (pa && pb) {
      if (i < na && (j >= nb || a[i].part <= b[j].part))
        part = a[i].part;
      else
        part = b[j].part;
    } else {
      part = pa ? a[i].part : b[j].part;
    }
    size_t ia = i, ja = j;
    if (pa)
      while (i < na && a[i].part == part)
        i++;
    if (pb)
      while (j < nb && b[j].part == part)
        j++;
    size_t a0 = pa ? ia : 0, a1 = pa ? i : na;
    size_t b0 = pb ? ja : 0, b1 = pb ? j : nb;
    join_partition(vtab->kind, part, a + a0, (int)a0, a1 - a0, b + b0, (int)b0,
                   b1 - b0, cur->rows);
  }
  return SQLITE_OK;
}

static int span_next(sqlite3_vtab_cursor *base) {
  ((span_cursor *)base)->pos++;
  return SQLITE_OK;
}

static int span_eof(sqlite3_vtab_cursor *base) {
  span_cursor *cur = (span_cursor *)base;
  return cur->pos >= cur->rows->len;
}

static int span_column(sqlite3_vtab_cursor *base, sqlite3_context *ctx,
                       int column) {
  span_cursor *cur = (span_cursor *)base;
  span_vtab *vtab = (span_vtab *)base->pVtab;
  const out_row *r = &g_array_index(cur->rows, out_row, cur->pos);
  if (column == COL_TS) {
    sqlite3_result_int64(ctx, r->ts);
    return SQLITE_OK;
  }
  if (column == COL_DUR) {
    sqlite3_result_int64(ctx, r->end - r->ts);
    return SQLITE_OK;
  }
  int c = column - 2;
  if (vtab->partition) {
    if (c == 0) {
      sqlite3_result_int64(ctx, r->part);
      return SQLITE_OK;
    }
    c--;
  }
  int s = 0;
  if ((guint)c >= vtab->sides[0].columns->len) {
    c -= (int)vtab->sides[0].columns->len;
    s = 1;
  }
  int index = s == 0 ? r->a : r->b;
  if (index >= 0) {
    const span *sp = &g_array_index(cur->spans[s], span, index);
    const cell *v = &g_array_index(cur->cells[s], cell, sp->first_cell + (guint)c);
    if (v->type == SQLITE_INTEGER)
      sqlite3_result_int64(ctx, v->u.i);
    else if (v->type == SQLITE_FLOAT)
      sqlite3_result_double(ctx, v->u.d);
    else if (v->type != SQLITE_NULL)
      sqlite3_result_value(ctx, v->u.copy);
  }
  return SQLITE_OK;
}

static int span_rowid(sqlite3_vtab_cursor *base, sqlite3_int64 *rowid) {
  *rowid = ((span_cursor *)base)->pos;
  return SQLITE_OK;
}

static const sqlite3_module span_module = {
    .iVersion = 0,
    .xCreate = span_create,
    .xConnect = span_create,
    .xBestIndex = span_best_index,
    .xDisconnect = span_disconnect,
    .xDestroy = span_disconnect,
    .xOpen = span_open,
    .xClose = span_close,
    .xFilter = span_filter,
    .xNext = span_next,
    .xEof = span_eof,
    .xColumn = span_column,
    .xRowid = span_rowid,
};

int span_join_register(sqlite3 *db) {
  int rc = sqlite3_create_module_v2(db, "span_join", &span_module,
                                    GINT_TO_POINTER(JOIN_INNER), NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_module_v2(db, "span_left_join", &span_module,
                                  GINT_TO_POINTER(JOIN_LEFT), NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_module_v2(db, "span_outer_join", &span_module,
                                  GINT_TO_POINTER(JOIN_OUTER), NULL);
  return rc;
}
