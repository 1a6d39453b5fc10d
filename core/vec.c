#include "vec.h"

#include <glib.h>

void tm_vec_reserve_(void **data, size_t *cap, size_t need, size_t elem_size) {
  if (need <= *cap)
    return;
  size_t new_cap = *cap ? *cap : 16;
  while (new_cap < need) {
    if (new_cap > SIZE_MAX / 2 / elem_size)
      g_error("tracemerge: vector of %zu elements of %zu bytes is too large",
              need, elem_size);
    new_cap *= 2;
  }
  *data = g_realloc(*data, new_cap * elem_size);
  *cap = new_cap;
}
