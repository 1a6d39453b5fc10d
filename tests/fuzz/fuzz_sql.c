/*
 * libFuzzer target for the SQL layer a query text reaches
 * (core/sql: trace_processor's functions, PerfettoSQL statements and
 * macros, the connection's safety settings): the input is run as a query
 * on a fresh surface over a small model, with a time limit, its rows
 * written to /dev/null. SQL errors and refusals are expected outcomes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/string_pool.h"
#include "sql/sql_surface.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static tm_model *model;
static FILE *sink;

/* A model with a slice, a thread and an arg set, so that EXTRACT_ARG and
 * the slice functions have something to find. */
static tm_model *small_model(void) {
  tm_model *m = model_new();
  uint32_t machine = model_add_machine(m, 0);
  uint32_t upid = model_add_process(m, machine, 7);
  (void)model_add_thread(m, machine, 8, upid);
  tm_arg_value v = {.type = TM_ARG_INT, .u.int_value = 42};
  uint32_t set = model_add_arg(m, 0, string_pool_intern_cstr(m->strings, "args.x"), v);
  model_add_slice(m, 1000, 10, TM_NULL_ID, 0, 0, 0, TM_NULL_ID, set);
  model_finalize(m);
  return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (model == NULL) {
    model = small_model();
    sink = fopen("/dev/null", "w");
  }
  char *sql = g_strndup((const char *)data, size);
  GError *error = NULL;
  tm_sql_surface *surface = sql_surface_new(model, NULL, &error);
  if (surface == NULL) {
    fprintf(stderr, "no SQL surface: %s\n", error ? error->message : "?");
    abort();
  }
  sql_surface_set_timeout(surface, 2.0);
  (void)sql_surface_query(surface, sql, TM_FORMAT_CSV, sink, &error);
  g_clear_error(&error);
  sql_surface_free(surface);
  g_free(sql);
  return 0;
}
