/* TRACEMERGE_ERROR, the library's one public error domain (<tracemerge/error.h>):
 * here, below every stage, because the import side and the recording
 * library both set it. */
#include <tracemerge/error.h>

G_DEFINE_QUARK(tm-error-quark, tm_error)
