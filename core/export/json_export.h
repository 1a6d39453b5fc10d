/*
 * The Chrome JSON export (Trace Event Format) of every selected machine:
 * see json_export.c for the mapping of machines, threads and events.
 */
#ifndef TM_JSON_EXPORT_H
#define TM_JSON_EXPORT_H

#include <glib.h>
#include <stdbool.h>

#include "export/export_selection.h"
#include "model/model.h"
#include "record/packet_writer.h"

/* Writes the selection of `model` through `out` (tmr_out_fn: the same
 * byte sink the Perfetto export writes to). */
bool json_export(const tm_model *model, const export_selection *sel, tmr_out_fn out, void *user,
                 GError **error);

#endif /* TM_JSON_EXPORT_H */
