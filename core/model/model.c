/*
 * The model's row constructors. Every constructor appends one row with its
 * nullable columns NULL, so a later column added to a row struct defaults
 * to NULL in exactly one place.
 */
#include "model/model.h"

#include "base/checked_math.h"

#include <glib.h>
#include <string.h>

tm_model *model_new(void) {
  tm_model *model = g_new0(tm_model, 1);
  model->strings = string_pool_new();
  model->next_arg_set_id = 1;
  return model;
}

void model_free(tm_model *model) {
  if (!model)
    return;
  tm_vec_free(&model->machines);
  tm_vec_free(&model->trace_files);
  tm_vec_free(&model->metadata);
  if (model->metadata_index)
    g_hash_table_destroy(model->metadata_index);
  tm_vec_free(&model->stats);
  tm_vec_free(&model->import_logs);
  tm_vec_free(&model->clock_snapshots);
  tm_vec_free(&model->processes);
  tm_vec_free(&model->threads);
  tm_vec_free(&model->tracks);
  tm_vec_free(&model->slices);
  tm_vec_free(&model->slice_ts_base);
  tm_vec_free(&model->slice_wide);
  tm_vec_free(&model->slice_categories);
  if (model->slice_category_index)
    g_hash_table_destroy(model->slice_category_index);
  tm_vec_free(&model->slice_category_escapes);
  thread_times_free(&model->slice_thread_times);
  tm_vec_free(&model->counters);
  tm_vec_free(&model->flows);
  tm_vec_free(&model->args);
  tm_vec_free(&model->arg_keys);
  arg_text_free(&model->arg_text);
  if (model->arg_key_index)
    g_hash_table_destroy(model->arg_key_index);
  tm_vec_free(&model->arg_set_first_row);
  tm_vec_free(&model->arg_set_resumed);
  tm_vec_free(&model->arg_wide);
  tm_vec_free(&model->cpus);
  tm_vec_free(&model->sched_slices);
  tm_vec_free(&model->thread_states);
  tm_vec_free(&model->thread_state_blocked);
  tm_vec_free(&model->cpu_lookup);
  tm_vec_free(&model->stack_profile_mappings);
  tm_vec_free(&model->stack_profile_frames);
  tm_vec_free(&model->stack_profile_callsites);
  tm_vec_free(&model->cpu_profile_samples);
  tm_vec_free(&model->instruments_samples);
  tm_vec_free(&model->ftrace_events);
  tm_vec_free(&model->android_logs);
  tm_vec_free(&model->packages);
  tm_vec_free(&model->frame_timeline);
  tm_vec_free(&model->perf_samples);
  for (size_t i = 0; i < G_N_ELEMENTS(model->profile_rows); i++)
    g_free(model->profile_rows[i].slots);
  string_pool_free(model->strings);
  g_free(model);
}

uint32_t model_add_machine(tm_model *model, int64_t raw_id) {
  tm_machine_row row = {
      .raw_id = raw_id,
      .num_cpus = TM_NULL_INT64,
      .android_sdk_version = TM_NULL_INT64,
      .system_ram_bytes = TM_NULL_INT64,
      .system_ram_gb = TM_NULL_INT64,
  };
  tm_vec_push(&model->machines, row);
  return (uint32_t)(model->machines.len - 1);
}

uint32_t model_add_process(tm_model *model, uint32_t machine_id, int64_t pid) {
  tm_process_row row = {
      .pid = pid,
      .start_ts = TM_NULL_INT64,
      .end_ts = TM_NULL_INT64,
      .parent_upid = TM_NULL_ID,
      .uid = TM_NULL_INT64,
      .android_appid = TM_NULL_INT64,
      .android_user_id = TM_NULL_INT64,
      .machine_id = machine_id,
  };
  tm_vec_push(&model->processes, row);
  return (uint32_t)(model->processes.len - 1);
}

uint32_t model_add_thread(tm_model *model, uint32_t machine_id, int64_t tid,
                          uint32_t upid) {
  tm_thread_row row = {
      .tid = tid,
      .start_ts = TM_NULL_INT64,
      .end_ts = TM_NULL_INT64,
      .upid = upid,
      .is_main_thread = -1,
      .machine_id = machine_id,
  };
  tm_vec_push(&model->threads, row);
  return (uint32_t)(model->threads.len - 1);
}

uint32_t model_add_trace_file(tm_model *model, uint32_t parent_id,
                              const char *name, bool is_container) {
  tm_trace_file_row row = {
      .parent_id = parent_id,
      .name = string_pool_intern_cstr(model->strings, name),
      .trace_type = string_pool_intern_cstr(model->strings, "unknown"),
      .processing_order = TM_NULL_INT64,
      .is_container = is_container,
  };
  tm_vec_push(&model->trace_files, row);
  return (uint32_t)(model->trace_files.len - 1);
}

uint32_t model_add_import_log(tm_model *model, uint32_t stat_id,
                              uint32_t trace_id) {
  tm_import_log_row row = {
      .trace_id = trace_id,
      .stat_id = stat_id,
      .ts = TM_NULL_INT64,
      .byte_offset = TM_NULL_INT64,
  };
  tm_vec_push(&model->import_logs, row);
  return (uint32_t)(model->import_logs.len - 1);
}

typedef struct metadata_key {
  tm_str_id name;
  uint32_t machine_id;
  uint32_t trace_id;
} metadata_key;

static guint metadata_key_hash(gconstpointer p) {
  const metadata_key *k = p;
  uint64_t v = ((uint64_t)k->name << 32 | k->machine_id) * 0x9E3779B97F4A7C15ull;
  return (guint)((v ^ (uint64_t)k->trace_id * 0xC2B2AE3D27D4EB4Full) >> 32);
}

static gboolean metadata_key_equal(gconstpointer a, gconstpointer b) {
  const metadata_key *x = a, *y = b;
  return x->name == y->name && x->machine_id == y->machine_id && x->trace_id == y->trace_id;
}

/* Indexes the single-key rows pushed since the last call. Every file adds
 * tens of rows, so with thousands of files a scan per lookup would be
 * quadratic. */
static void metadata_index_catch_up(tm_model *model) {
  if (!model->metadata_index)
    model->metadata_index =
        g_hash_table_new_full(metadata_key_hash, metadata_key_equal, g_free, NULL);
  for (; model->metadata_indexed < model->metadata.len; model->metadata_indexed++) {
    const tm_metadata_row *row = &model->metadata.data[model->metadata_indexed];
    if (row->key_type != TM_METADATA_SINGLE)
      continue;
    metadata_key key = {row->name, row->machine_id, row->trace_id};
    if (!g_hash_table_contains(model->metadata_index, &key))
      g_hash_table_insert(model->metadata_index, g_memdup2(&key, sizeof key),
                          GSIZE_TO_POINTER(model->metadata_indexed + 1));
  }
}

static tm_metadata_row *metadata_single_row(tm_model *model, const char *name,
                                            uint32_t machine_id,
                                            uint32_t trace_id) {
  tm_str_id name_id = string_pool_intern_cstr(model->strings, name);
  metadata_index_catch_up(model);
  metadata_key key = {name_id, machine_id, trace_id};
  gpointer found = g_hash_table_lookup(model->metadata_index, &key);
  if (found)
    return &model->metadata.data[GPOINTER_TO_SIZE(found) - 1];
  tm_metadata_row row = {
      .name = name_id,
      .key_type = TM_METADATA_SINGLE,
      .machine_id = machine_id,
      .trace_id = trace_id,
  };
  tm_vec_push(&model->metadata, row);
  return &model->metadata.data[model->metadata.len - 1];
}

void model_metadata_set_int(tm_model *model, const char *name,
                            uint32_t machine_id, uint32_t trace_id,
                            int64_t value) {
  tm_metadata_row *row = metadata_single_row(model, name, machine_id, trace_id);
  row->is_int = true;
  row->int_value = value;
  row->str_value = 0;
}

void model_metadata_set_string(tm_model *model, const char *name,
                               uint32_t machine_id, uint32_t trace_id,
                               tm_str_id value) {
  tm_metadata_row *row = metadata_single_row(model, name, machine_id, trace_id);
  row->is_int = false;
  row->int_value = 0;
  row->str_value = value;
}

/* "args.list[2].x" -> "args.list.x": the flat key drops array indexes. */
static tm_str_id flat_key_of(tm_model *model, tm_str_id key) {
  const char *s = string_pool_borrow(model->strings, key);
  if (!s || !strchr(s, '['))
    return key;
  size_t len = string_pool_length(model->strings, key);
  char stack_buf[256];
  char *buf = len < sizeof stack_buf ? stack_buf : g_malloc(len + 1);
  size_t out = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '[') {
      const char *close = strchr(s + i, ']');
      if (close) {
        i = (size_t)(close - s);
        continue;
      }
    }
    buf[out++] = s[i];
  }
  tm_str_id flat = string_pool_intern(model->strings, buf, out);
  if (buf != stack_buf)
    g_free(buf);
  return flat;
}

/* The id of the (key, type, storage) triple in model->arg_keys, added on
 * first use; `type` is a tm_arg_type, maybe with TM_ARG_IN_TEXT or
 * ARG_WIDE. */
#define ARG_WIDE 0x80
static uint32_t arg_key_id(tm_model *model, tm_str_id key, uint8_t type) {
  uint32_t *memo =
      &model->arg_key_memo[((key ^ (uint32_t)type << 24) * 0x9e3779b1u) >> 22];
  if (*memo) {
    const tm_arg_key *k = &model->arg_keys.data[*memo - 1];
    if (k->key == key && k->type_bits == type)
      return *memo - 1;
  }
  if (!model->arg_key_index)
    model->arg_key_index =
        g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  gint64 probe = (gint64)(((uint64_t)key << 8) | type);
  gpointer found = g_hash_table_lookup(model->arg_key_index, &probe);
  uint32_t id;
  if (found) {
    id = GPOINTER_TO_UINT(found) - 1;
  } else {
    if (model->arg_keys.len >= UINT32_MAX - 1)
      g_error("tracemerge: more than 2^32 distinct arg keys");
    id = (uint32_t)model->arg_keys.len;
    tm_arg_key entry = {.key = key, .flat_key = flat_key_of(model, key),
                        .value_type = type & (uint8_t) ~(TM_ARG_IN_TEXT | ARG_WIDE),
                        .in_text = (type & TM_ARG_IN_TEXT) != 0,
                        .wide = (type & ARG_WIDE) != 0, .type_bits = type};
    tm_vec_push(&model->arg_keys, entry);
    gint64 *stored = g_new(gint64, 1);
    *stored = probe;
    g_hash_table_insert(model->arg_key_index, stored, GUINT_TO_POINTER(id + 1));
  }
  *memo = id + 1;
  return id;
}

static uint32_t arg_wide_add(tm_model *model, tm_arg_wide value) {
  if (model->arg_wide.len >= UINT32_MAX)
    g_error("tracemerge: more than 2^32 wide arg values");
  tm_vec_push(&model->arg_wide, value);
  return (uint32_t)(model->arg_wide.len - 1);
}

/* Appends `row` to set `arg_set_id` (0: a new set); returns the set. */
static inline uint32_t push_arg_row(tm_model *model, uint32_t arg_set_id, tm_arg_row row) {
  /* Checked where a row number is stored as 32 bits (once a set, not a row). */
  if (arg_set_id == 0 || arg_set_id != model->arg_set_last)
    if (model->args.len >= UINT32_MAX)
      g_error("tracemerge: more than 2^32 arg rows");
  if (arg_set_id == 0) {
    arg_set_id = model->next_arg_set_id++;
    tm_vec_reserve(&model->arg_set_first_row, (size_t)arg_set_id + 1);
    model->arg_set_first_row.data[arg_set_id] = (uint32_t)model->args.len;
    model->arg_set_first_row.len = (size_t)arg_set_id + 1;
  } else if (arg_set_id != model->arg_set_last) {
    tm_arg_set_resume resume = {(uint32_t)model->args.len, arg_set_id};
    tm_vec_push(&model->arg_set_resumed, resume);
  }
  model->arg_set_last = arg_set_id;
  tm_vec_push(&model->args, row);
  return arg_set_id;
}

uint32_t model_add_arg(tm_model *model, uint32_t arg_set_id, tm_str_id key,
                       tm_arg_value value) {
  uint8_t type = (uint8_t)value.type;
  tm_arg_row row;
  switch (value.type) {
  case TM_ARG_REAL:
    type |= ARG_WIDE;
    row.value = arg_wide_add(model, (tm_arg_wide){.real_value = value.u.real_value});
    break;
  case TM_ARG_STRING:
  case TM_ARG_JSON:
    row.value = value.u.str_id;
    break;
  default:
    if (type & TM_ARG_IN_TEXT) {
      row.value = (uint32_t)value.u.int_value;
    } else if (value.u.int_value >= INT32_MIN && value.u.int_value <= INT32_MAX) {
      row.value = (uint32_t)(int32_t)value.u.int_value;
    } else {
      type |= ARG_WIDE;
      row.value = arg_wide_add(model, (tm_arg_wide){.int_value = value.u.int_value});
    }
    break;
  }
  row.key_id = arg_key_id(model, key, type);
  return push_arg_row(model, arg_set_id, row);
}

void model_copy_arg(tm_model *model, uint32_t arg_set_id, size_t row) {
  push_arg_row(model, arg_set_id, model->args.data[row]);
}

/* The last set begun at or before `row`: arg_set_first_row is increasing
 * from set 1. */
static uint32_t set_begun_at_or_before(const tm_model *model, size_t row) {
  size_t lo = 1, hi = model->arg_set_first_row.len; /* answer in [lo, hi) */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (model->arg_set_first_row.data[mid] <= row)
      lo = mid;
    else
      hi = mid;
  }
  return (uint32_t)lo;
}

/* How many resumed rows are at or before `row` (arg_set_resumed is in
 * row order). */
static size_t resumed_through(const tm_model *model, size_t row) {
  size_t lo = 0, hi = model->arg_set_resumed.len;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (model->arg_set_resumed.data[mid].row <= row)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

uint32_t model_arg_set_id(const tm_model *model, size_t row) {
  if (row >= model->args.len || model->arg_set_first_row.len < 2)
    return 0;
  uint32_t set = set_begun_at_or_before(model, row);
  /* The last resumed row at or before `row`, if after the set's start. */
  size_t lo = resumed_through(model, row);
  if (lo > 0 &&
      model->arg_set_resumed.data[lo - 1].row > model->arg_set_first_row.data[set])
    return model->arg_set_resumed.data[lo - 1].arg_set_id;
  return set;
}

uint32_t *model_arg_set_ids_new(const tm_model *model) {
  size_t n = model->args.len;
  uint32_t *ids = g_new(uint32_t, n ? n : 1);
  size_t next_set = 1, next_resume = 0;
  uint32_t set = 0;
  for (size_t r = 0; r < n; r++) {
    /* A row is either a new set's first or a resumed one, never both. */
    if (next_set < model->arg_set_first_row.len &&
        model->arg_set_first_row.data[next_set] == r)
      set = (uint32_t)next_set++;
    else if (next_resume < model->arg_set_resumed.len &&
             model->arg_set_resumed.data[next_resume].row == r)
      set = model->arg_set_resumed.data[next_resume++].arg_set_id;
    ids[r] = set;
  }
  return ids;
}

bool model_arg_set_first_rows(const tm_model *model, uint32_t arg_set_id,
                              size_t *first, size_t *end) {
  if (arg_set_id == 0 || arg_set_id >= model->arg_set_first_row.len)
    return false;
  *first = model->arg_set_first_row.data[arg_set_id];
  *end = arg_set_id + 1 < model->arg_set_first_row.len
             ? model->arg_set_first_row.data[arg_set_id + 1]
             : model->args.len;
  /* A resumed row of another set may cut it short. */
  size_t lo = resumed_through(model, *first);
  if (lo < model->arg_set_resumed.len && model->arg_set_resumed.data[lo].row < *end)
    *end = model->arg_set_resumed.data[lo].row;
  return true;
}

uint32_t model_slice_wide_code(tm_model *model, int64_t v, uint32_t code) {
  if ((code & TM_SLICE_WIDE) && code != TM_SLICE_DUR_OPEN) {
    model->slice_wide.data[code & ~TM_SLICE_WIDE] = v;
    return code;
  }
  g_assert(model->slice_wide.len < TM_SLICE_WIDE - 1);
  tm_vec_push(&model->slice_wide, v);
  return TM_SLICE_WIDE | (uint32_t)(model->slice_wide.len - 1);
}

uint16_t model_slice_category_lookup(tm_model *model, uint32_t slice_id,
                                     tm_str_id category) {
  if (!model->slice_category_index) {
    model->slice_category_index = g_hash_table_new(NULL, NULL);
    tm_vec_push(&model->slice_categories, 0); /* code 0: NULL */
  }
  uint32_t code = GPOINTER_TO_UINT(
      g_hash_table_lookup(model->slice_category_index, GUINT_TO_POINTER(category)));
  if (code) {
    code--;
  } else if (model->slice_categories.len < TM_SLICE_CATEGORY_ESCAPE) {
    code = (uint32_t)model->slice_categories.len;
    tm_vec_push(&model->slice_categories, category);
    g_hash_table_insert(model->slice_category_index, GUINT_TO_POINTER(category),
                        GUINT_TO_POINTER(code + 1));
  } else {
    tm_slice_category_escape escape = {slice_id, category};
    tm_vec_push(&model->slice_category_escapes, escape);
    return TM_SLICE_CATEGORY_ESCAPE;
  }
  *model_slice_category_memo(model, category) = code + 1;
  return (uint16_t)code;
}

tm_str_id model_slice_category_escaped(const tm_model *model, uint32_t slice_id) {
  size_t lo = 0, hi = model->slice_category_escapes.len;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (model->slice_category_escapes.data[mid].slice_id < slice_id)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < model->slice_category_escapes.len &&
      model->slice_category_escapes.data[lo].slice_id == slice_id)
    return model->slice_category_escapes.data[lo].category;
  return 0;
}

bool model_slice_thread_time(const tm_model *model, uint32_t slice_id,
                             int64_t *thread_ts, int64_t *thread_dur) {
  return thread_times_get(&model->slice_thread_times, slice_id, thread_ts,
                          thread_dur);
}

void model_slice_set_thread_time(tm_model *model, uint32_t slice_id,
                                 int64_t thread_ts, int64_t thread_dur) {
  thread_times_set(&model->slice_thread_times, slice_id, thread_ts, thread_dur);
}

void model_finalize(tm_model *model) {
  bool any = false;
  int64_t start = INT64_MAX, end = INT64_MIN;
  /* Block by block: a row's ts is its block's first plus its code. */
  for (size_t first = 0; first < model->slices.len; first += TM_SLICE_TS_BLOCK) {
    uint64_t base = (uint64_t)model->slice_ts_base.data[first >> TM_SLICE_TS_BLOCK_SHIFT];
    size_t block_end = MIN(model->slices.len, first + TM_SLICE_TS_BLOCK);
    for (size_t i = first; i < block_end; i++) {
      const tm_slice_row *s = &model->slices.data[i];
      int64_t ts = s->ts_code & TM_SLICE_WIDE ? model_slice_ts(model, (uint32_t)i)
                                              : (int64_t)(base + s->ts_code);
      int64_t dur = s->dur_code < TM_SLICE_WIDE ? s->dur_code : model_slice_dur(model, s);
      int64_t slice_end = tm_saturating_add(ts, dur > 0 ? dur : 0);
      start = MIN(start, ts);
      end = MAX(end, slice_end);
    }
    any = true;
  }
  for (size_t i = 0; i < model->counters.len; i++) {
    start = MIN(start, model->counters.data[i].ts);
    end = MAX(end, model->counters.data[i].ts);
    any = true;
  }
  /* sched and thread_state rows come in ts order, each ended by a row
   * begun at its end (sched_builder.h): the first row begins first and
   * none ends after the last one begins. */
  if (model->sched_slices.len) {
    start = MIN(start, model->sched_slices.data[0].ts);
    end = MAX(end, model->sched_slices.data[model->sched_slices.len - 1].ts);
    any = true;
  }
  if (model->thread_states.len) {
    start = MIN(start, model->thread_states.data[0].ts);
    end = MAX(end, model->thread_states.data[model->thread_states.len - 1].ts);
    any = true;
  }
  if (!any) {
    start = end = 0;
  } else if (start == end) {
    end = tm_saturating_add(start, 1);
  }
  model->bounds_start = start;
  model->bounds_end = end;
}
