/*
 * The session's side of the perfetto_manifest (docs/clock-model.md §9,
 * §10.2): detection and placement, then applying what manifest.c parsed,
 * validated and resolved.
 *
 * Placement: the container delivers a listed ZIP's manifest members first;
 * a stream (TAR, gzip, several root inputs) delivers in its own order, so
 * there the manifest must come before every trace file. Once the input is
 * read it must also be first in the reference's processing order (a
 * gzip-wrapped manifest sorts after proto members, in a ZIP or a TAR). A
 * second manifest and a late manifest fail the import. A standalone manifest
 * (the only input) is applied like any other (issue 10 §2; the reference sets
 * trace_time_clock_id from it): its machine rows, attributes and trace
 * time exist although no trace follows, and an override whose member
 * never comes fails with #43 as in an archive without that member.
 *
 * Applying, at the end of the manifest, before any trace file begins:
 * named machine rows (allocation order, raw ids from 2^32), the
 * `manifest_attribute.<key>` metadata, the trace-time claim (which wins
 * over every file's, see session.c choose_trace_time), and one two-clock
 * snapshot per `clocks` override. Resolution runs against the names of the
 * trace_file rows that exist then. A listed root ZIP has a row for every
 * member by then, so a path without one is absent (#43 at once, in
 * validation order). A streamed archive has no rows yet for the members
 * after the manifest, so there every manifest path without a row is
 * offered to the resolver as a member still to come: an override whose
 * PIN source or private-clock reference is such a member gets its edge
 * when that member begins (before it is parsed; nothing is converted
 * before every file is read, so the edge is in time), and if the member
 * never comes, the resolver's own message (#43) fails the import once the
 * input is read. An override on a container or manifest member is found by
 * checking every new trace_file row as leaves begin and once more at the
 * end of reading.
 *
 * Errors raised while a reader runs (undeclared embedded machine, a
 * `machine` override on a multi-machine file, a pinned file emitting a
 * snapshot or a remote machine) cannot be returned through the reader ABI:
 * session_fail_import() records the first one as the import's fatal error,
 * marks the file's host failed (no more bytes are fed to it), and every
 * later sink callback refuses with that error, which stops the import. The
 * session reports the fatal error before any other.
 *
 * Invariants: every message is manifest.c's, byte for byte; each override
 * adds exactly one edge, once; lookups per member are O(1).
 */
#include <string.h>

#include "input/container.h"
#include "input/manifest.h"
#include "input/host_services.h"
#include "session/session_internal.h"
#include "base/string_pool.h"

const char session_manifest_type[] = "perfetto_manifest";

/* An override whose edge waits for member files that had no row when the
 * manifest was applied. */
typedef struct pending_override {
  const tm_manifest_clocks *clocks;
  uint32_t source_file; /* PIN source's file id, TM_NULL_ID until known */
  uint32_t sync_file;   /* private-clock reference's file id, idem */
  const char *source_path; /* the awaited member, NULL if none awaited */
  const char *sync_path;
} pending_override;

struct tm_session_manifest {
  uint32_t file_id; /* the manifest's row, TM_NULL_ID before one begins */
  tm_manifest_parser *parser;
  tm_manifest *manifest; /* NULL unless applied */
  uint32_t *machine_rows; /* manifest machine index -> machine row */
  size_t rows_checked;    /* trace_file rows checked for overrides */
  TM_VEC(pending_override) pending;
  GHashTable *awaited; /* member path -> GArray of pending indexes */
  tm_clock_node trace_time;
  bool trace_file_started;
};

static tm_session_manifest *state_of(tm_session *session) {
  if (!session->manifest) {
    session->manifest = g_new0(tm_session_manifest, 1);
    session->manifest->file_id = TM_NULL_ID;
    session->manifest->trace_time = TM_NO_CLOCK_NODE;
  }
  return session->manifest;
}

void session_manifest_free(tm_session_manifest *st) {
  if (!st)
    return;
  if (st->parser)
    manifest_parser_free(st->parser);
  manifest_free(st->manifest);
  g_free(st->machine_rows);
  tm_vec_free(&st->pending);
  if (st->awaited)
    g_hash_table_destroy(st->awaited);
  g_free(st);
}

void session_fail_import(tm_session *session, tm_host *host, GError *take) {
  if (host)
    host->failed = true;
  if (session->fatal_error)
    g_error_free(take);
  else
    session->fatal_error = take;
}

bool session_refuse_if_failed(tm_session *session, GError **error) {
  if (!session->fatal_error)
    return true;
  if (error && !*error)
    *error = g_error_copy(session->fatal_error);
  return false;
}

/* Records `take` as the fatal error and refuses with it. */
static bool fail(tm_session *session, GError *take, GError **error) {
  session_fail_import(session, NULL, take);
  return session_refuse_if_failed(session, error);
}

bool session_manifest_begin(tm_session *session, uint32_t file_id,
                            GError **error) {
  tm_session_manifest *st = state_of(session);
  if (st->file_id != TM_NULL_ID)
    return fail(session, manifest_error_multiple_manifests(), error);
  if (st->trace_file_started)
    return fail(session, manifest_error_not_first(), error);
  st->file_id = file_id;
  st->parser = manifest_parser_new();
  return true;
}

bool session_manifest_is(tm_session *session, uint32_t file_id) {
  return session->manifest && session->manifest->file_id == file_id &&
         file_id != TM_NULL_ID;
}

bool session_manifest_feed(tm_session *session, const uint8_t *data,
                           size_t len, GError **error) {
  tm_session_manifest *st = session->manifest;
  GError *parse_error = NULL;
  if (!st->parser)
    return session_refuse_if_failed(session, error);
  if (!manifest_parser_feed(st->parser, data, len, &parse_error))
    return fail(session, parse_error, error);
  return true;
}

/* The host machine row, created with its placeholders on first use: the
 * machine of a manifest's files that name none. */
static uint32_t host_machine_row(tm_session *session) {
  if (session->host_machine == TM_NULL_ID) {
    session->host_machine = model_add_machine(session->import.model, 0);
    import_open_machine(&session->import, session->host_machine);
  }
  return session->host_machine;
}

static uint32_t machine_row(tm_session *session, uint32_t index) {
  if (index == TM_MANIFEST_NO_MACHINE)
    return host_machine_row(session);
  return session->manifest->machine_rows[index];
}

static tm_clock_node clock_node(tm_session *session, uint32_t clock_id,
                                uint32_t file_id, uint32_t machine_index) {
  tm_clock_key key = {clock_id, 0, file_id, machine_row(session, machine_index)};
  return clock_graph_node(session->import.clocks, &key);
}

/* The override's snapshot {source: source_reading, reference:
 * sync_reading}; file ids matter only for private clocks. */
static bool add_override_edge(tm_session *session, const tm_manifest_clocks *c,
                              uint32_t source_file, uint32_t sync_file,
                              GError **error) {
  tm_clock_reading readings[2] = {
      {.node = c->clock ? clock_node(session, c->clock, 0, c->source_machine)
                        : clock_node(session, TM_CLOCK_TRACE_FILE, source_file,
                                     c->source_machine),
       .value = c->source_reading_ns,
       .unit_ns = 1},
      {.node = c->sync_clock
                   ? clock_node(session, c->sync_clock, 0, c->sync_machine)
                   : clock_node(session, TM_CLOCK_TRACE_FILE, sync_file,
                                c->sync_machine),
       .value = c->sync_reading_ns,
       .unit_ns = 1},
  };
  GError *graph_error = NULL;
  if (clock_graph_add_snapshot(session->import.clocks, readings, 2, &graph_error) < 0)
    return fail(session, graph_error, error);
  return true;
}

static void await_member(tm_session_manifest *st, const char *path,
                         uint32_t pending_index) {
  if (!st->awaited)
    st->awaited = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
                                        (GDestroyNotify)g_array_unref);
  GArray *list = g_hash_table_lookup(st->awaited, path);
  if (!list) {
    list = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    g_hash_table_insert(st->awaited, (gpointer)path, list);
  }
  g_array_append_val(list, pending_index);
}

/* Adds each override's edge now, or parks it until its members begin. */
static bool apply_overrides(tm_session *session, const char *const *paths,
                            size_t n_rows, GError **error) {
  tm_session_manifest *st = session->manifest;
  const tm_manifest *m = st->manifest;
  for (size_t i = 0; i < m->n_files; i++) {
    const tm_manifest_file *f = &m->files[i];
    if (f->shadowed || !f->clocks)
      continue;
    const tm_manifest_clocks *c = f->clocks;
    pending_override p = {c, TM_NULL_ID, TM_NULL_ID, NULL, NULL};
    if (c->clock == 0) {
      if (c->source_member < n_rows)
        p.source_file = (uint32_t)c->source_member;
      else
        p.source_path = paths[c->source_member];
    }
    if (c->sync_clock == 0) {
      if (c->sync_member < n_rows)
        p.sync_file = (uint32_t)c->sync_member;
      else
        p.sync_path = paths[c->sync_member];
    }
    if (!p.source_path && !p.sync_path) {
      if (!add_override_edge(session, c, p.source_file, p.sync_file, error))
        return false;
      continue;
    }
    uint32_t index = (uint32_t)st->pending.len;
    tm_vec_push(&st->pending, p);
    if (p.source_path)
      await_member(st, p.source_path, index);
    if (p.sync_path && (!p.source_path || strcmp(p.sync_path, p.source_path) != 0))
      await_member(st, p.sync_path, index);
  }
  return true;
}

/* A member the manifest may name: a row with a non-empty name. */
static const char *row_name(tm_session *session, uint32_t file_id) {
  const tm_trace_file_row *row = &session->import.model->trace_files.data[file_id];
  const char *name = string_pool_borrow(session->import.model->strings, row->name);
  return name && *name ? name : NULL;
}

/* The manifest's entry for trace file `file_id` (st->manifest is read),
 * NULL if its row has no name or the manifest lists no such file; the
 * row's name in *name when `name` is not NULL. */
static const tm_manifest_file *manifest_entry_of(tm_session *session,
                                                 const tm_session_manifest *st,
                                                 uint32_t file_id, const char **name) {
  const char *row = row_name(session, file_id);
  if (name)
    *name = row;
  return row ? manifest_borrow_file(st->manifest, row) : NULL;
}

/* §10.2: overrides on containers and manifests, for rows not checked yet. */
static bool check_new_rows(tm_session *session, GError **error) {
  tm_session_manifest *st = session->manifest;
  tm_model *model = session->import.model;
  for (; st->rows_checked < model->trace_files.len; st->rows_checked++) {
    uint32_t id = (uint32_t)st->rows_checked;
    const tm_trace_file_row *row = &model->trace_files.data[id];
    const char *type = string_pool_borrow(model->strings, row->trace_type);
    if (!row->is_container && g_strcmp0(type, session_manifest_type) != 0)
      continue;
    const char *name = row_name(session, id);
    const tm_manifest_file *f = name ? manifest_borrow_file(st->manifest, name) : NULL;
    if (f && manifest_file_has_override(f))
      return fail(session, manifest_error_override_on_container(name), error);
  }
  return true;
}

static void add_machine_rows(tm_session *session) {
  tm_session_manifest *st = session->manifest;
  const tm_manifest *m = st->manifest;
  st->machine_rows = g_new(uint32_t, m->n_machines ? m->n_machines : 1);
  for (size_t i = 0; i < m->n_machines; i++) {
    uint32_t row = model_add_machine(session->import.model, m->machines[i].raw_id);
    session->import.model->machines.data[row].name = string_pool_intern(
        session->import.model->strings, m->machines[i].name.str, m->machines[i].name.len);
    import_open_machine(&session->import, row);
    st->machine_rows[i] = row;
  }
}

/* Keys are unique (manifest.c keeps the last value of a repeated key) and
 * the names are ours alone, so rows are appended without the metadata
 * scan: a manifest of many attributes stays linear. */
static void add_attributes(tm_session *session) {
  const tm_manifest *m = session->manifest->manifest;
  tm_model *model = session->import.model;
  for (size_t i = 0; i < m->n_attributes; i++) {
    const tm_manifest_attribute *a = &m->attributes[i];
    g_autofree char *name = g_strconcat("manifest_attribute.", a->key.str, NULL);
    tm_metadata_row row = {
        .name = string_pool_intern_cstr(model->strings, name),
        .key_type = TM_METADATA_SINGLE,
        .is_int = a->is_int,
        .int_value = a->is_int ? a->int_value : 0,
        .str_value = a->is_int ? 0
                               : string_pool_intern(model->strings, a->str_value.str,
                                                    a->str_value.len),
        .machine_id = TM_NULL_ID,
        .trace_id = TM_NULL_ID,
    };
    tm_vec_push(&model->metadata, row);
  }
}

/* True unless every member of the input already has a row: the input is
 * one root ZIP, listed through its central directory (container.c: every
 * member gets its row and is sniffed before the manifest is delivered, so
 * a detected sibling that has not begun shows the listing), holding no
 * container whose members come only when it is read. Then a path without
 * a row is absent now, and #43 keeps its place in the validation order. */
static bool members_may_still_come(tm_session *session) {
  const tm_model *model = session->import.model;
  uint32_t zip = model->trace_files.data[session->manifest->file_id].parent_id;
  if (session->n_inputs != 1 || zip == TM_NULL_ID ||
      model->trace_files.data[zip].parent_id != TM_NULL_ID)
    return true;
  const char *zip_type =
      string_pool_borrow(model->strings, model->trace_files.data[zip].trace_type);
  if (g_strcmp0(zip_type, "zip") != 0)
    return true;
  bool listed = false;
  for (uint32_t id = 0; id < model->trace_files.len; id++) {
    const tm_trace_file_row *row = &model->trace_files.data[id];
    const char *type = string_pool_borrow(model->strings, row->trace_type);
    if (id == zip || id == session->manifest->file_id)
      continue;
    if (row->is_container)
      return true;
    if (row->parent_id == zip && g_strcmp0(type, "unknown") != 0)
      listed = true;
  }
  return !listed;
}

/* Resolves against the rows that exist, plus, if members may still come,
 * every manifest path without a row as a member still to come (an index
 * >= n_rows). */
static bool resolve_and_apply(tm_session *session, GError **error) {
  tm_session_manifest *st = session->manifest;
  tm_manifest *m = st->manifest;
  size_t n_rows = session->import.model->trace_files.len;
  const char **paths = g_new0(const char *, n_rows + m->n_files + 1);
  size_t n_paths = n_rows;
  for (size_t i = 0; i < n_rows; i++)
    paths[i] = row_name(session, (uint32_t)i);
  bool may_come = members_may_still_come(session);
  for (size_t i = 0; i < m->n_files && may_come; i++) {
    const tm_manifest_file *f = &m->files[i];
    /* A path holding NUL can never be a member's name; an exported table
     * must already be present (#36). */
    if (!f->shadowed && !f->is_exported_table && strlen(f->path.str) == f->path.len)
      paths[n_paths++] = f->path.str;
  }
  bool ok = false;
  GError *resolve_error = NULL;
  if (!manifest_resolve(m, paths, n_paths, &resolve_error)) {
    fail(session, resolve_error, error);
    goto out;
  }
  add_machine_rows(session);
  add_attributes(session);
  /* The claim is the graph's trace time before any edge is added, as in
   * the reference (§9.1: claim, then edges), so an override edge that
   * moves the trace clock backwards is rejected (§10.3). */
  if (m->trace_time.present) {
    st->trace_time = clock_node(session, m->trace_time.clock, 0,
                                m->trace_time.machine_index);
    clock_graph_set_trace_time(session->import.clocks, st->trace_time);
  }
  ok = apply_overrides(session, paths, n_rows, error) && check_new_rows(session, error);

out:
  g_free(paths);
  return ok;
}

bool session_manifest_end(tm_session *session, bool truncated,
                          const char *damage, GError **error) {
  tm_session_manifest *st = session->manifest;
  if (!st->parser)
    return session_refuse_if_failed(session, error);
  if (truncated) {
    manifest_parser_free(st->parser);
    st->parser = NULL;
    return fail(session,
                g_error_new_literal(TRACEMERGE_ERROR, TM_ERROR_MANIFEST,
                                    damage ? damage : "perfetto_manifest: truncated"),
                error);
  }
  GError *parse_error = NULL;
  tm_manifest *m = manifest_parser_finish(st->parser, &parse_error);
  manifest_parser_free(st->parser);
  st->parser = NULL;
  if (!m)
    return fail(session, parse_error, error);
  st->manifest = m;
  return resolve_and_apply(session, error);
}

/* Fills the member's file id into the overrides waiting for it. */
static bool member_arrives(tm_session *session, const char *name,
                           uint32_t file_id, GError **error) {
  tm_session_manifest *st = session->manifest;
  GArray *list = st->awaited ? g_hash_table_lookup(st->awaited, name) : NULL;
  if (!list)
    return true;
  g_array_ref(list);
  /* The first file with a name is the member: later ones wait for nothing. */
  g_hash_table_remove(st->awaited, name);
  bool ok = true;
  for (guint k = 0; k < list->len && ok; k++) {
    pending_override *p = &st->pending.data[g_array_index(list, uint32_t, k)];
    if (p->source_path && strcmp(p->source_path, name) == 0) {
      p->source_file = file_id;
      p->source_path = NULL;
    }
    if (p->sync_path && strcmp(p->sync_path, name) == 0) {
      p->sync_file = file_id;
      p->sync_path = NULL;
    }
    if (!p->source_path && !p->sync_path)
      ok = add_override_edge(session, p->clocks, p->source_file, p->sync_file, error);
  }
  g_array_unref(list);
  return ok;
}

bool session_manifest_file_begins(tm_session *session, uint32_t file_id,
                                  uint32_t *machine_id,
                                  const tm_manifest_file **entry,
                                  GError **error) {
  tm_session_manifest *st = state_of(session);
  st->trace_file_started = true;
  *entry = NULL;
  *machine_id = TM_NULL_ID;
  if (!session_refuse_if_failed(session, error))
    return false;
  if (st->manifest) {
    if (!check_new_rows(session, error))
      return false;
    const char *name = NULL;
    *entry = manifest_entry_of(session, st, file_id, &name);
    if (name && !member_arrives(session, name, file_id, error))
      return false;
  }
  *machine_id = *entry && (*entry)->machine != TM_MANIFEST_NO_MACHINE
                    ? st->machine_rows[(*entry)->machine]
                    : host_machine_row(session);
  return true;
}

bool session_manifest_peek_machine(tm_session *session, uint32_t file_id,
                                   uint32_t *machine_id) {
  const tm_session_manifest *st = session->manifest;
  const tm_manifest_file *entry =
      st && st->manifest ? manifest_entry_of(session, st, file_id, NULL) : NULL;
  if (entry && entry->machine != TM_MANIFEST_NO_MACHINE) {
    if (!st->machine_rows)
      return false;
    *machine_id = st->machine_rows[entry->machine];
    return true;
  }
  *machine_id = session->host_machine;
  return session->host_machine != TM_NULL_ID;
}

/* §9.5: the manifest must be the first trace file in the order the
 * reference parses, not only in ours. A stream delivers in archive order,
 * and a listed ZIP delivers its plain manifests first, but a manifest
 * wrapped in a container (meta.json.gz) sorts with the containers, after
 * every proto member and after containers whose names sort before it:
 * the reference has parsed a trace file by then. processing_order,
 * assigned once the inputs are read, is that order. */
static bool manifest_came_first(tm_session *session) {
  const tm_model *model = session->import.model;
  int64_t manifest_order = model->trace_files.data[session->manifest->file_id].processing_order;
  for (uint32_t id = 0; id < model->trace_files.len; id++) {
    const tm_trace_file_row *row = &model->trace_files.data[id];
    if (id == session->manifest->file_id || row->is_container ||
        row->processing_order == TM_NULL_INT64)
      continue;
    if (row->processing_order < manifest_order)
      return false;
  }
  return true;
}

bool session_manifest_finish_reading(tm_session *session, GError **error) {
  tm_session_manifest *st = session->manifest;
  if (st && st->file_id != TM_NULL_ID && !manifest_came_first(session))
    return fail(session, manifest_error_not_first(), error);
  if (!st || !st->manifest)
    return true;
  if (!check_new_rows(session, error))
    return false;
  /* In `files` order, the source before the reference, as manifest.c. */
  for (size_t i = 0; i < st->pending.len; i++) {
    const pending_override *p = &st->pending.data[i];
    const char *missing = p->source_path ? p->source_path : p->sync_path;
    if (missing)
      return fail(session, manifest_error_unresolved_member(missing), error);
  }
  return true;
}

tm_clock_node session_manifest_trace_time(const tm_session *session) {
  return session->manifest ? session->manifest->trace_time : TM_NO_CLOCK_NODE;
}

bool session_manifest_embedded_machine(tm_host *host, uint32_t raw_id,
                                       uint32_t *machine_id) {
  const tm_manifest_file *f = host->manifest_entry;
  tm_session *session = host_session(host);
  GError *violation = NULL;
  uint32_t machine;
  if (!f)
    return false;
  if (f->has_machine)
    violation = manifest_error_machine_on_multi_machine_file();
  else if (manifest_file_is_pinned(f))
    violation = manifest_error_clocks_on_multi_machine_file();
  else if (!f->is_multi_machine)
    return false; /* embedded ids stay scoped to the file */
  else if (!manifest_file_remap(f, raw_id, &machine))
    violation = manifest_error_undeclared_machine(raw_id);
  if (violation) {
    session_fail_import(session, host, violation);
    *machine_id = host->machine_id;
  } else {
    *machine_id = session->manifest->machine_rows[machine];
  }
  return true;
}

bool session_manifest_remote_sync_allowed(tm_host *host) {
  if (!host->manifest_entry || !manifest_file_is_pinned(host->manifest_entry))
    return true;
  session_fail_import(host_session(host), host, manifest_error_clocks_on_multi_machine_file());
  return false;
}

bool session_manifest_snapshot_allowed(tm_host *host) {
  if (!host->manifest_entry || !manifest_file_is_pinned(host->manifest_entry))
    return true;
  session_fail_import(host_session(host), host, manifest_error_pinned_clock_snapshot());
  return false;
}
