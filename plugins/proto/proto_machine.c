/* The per-machine tables of the proto reader (see proto_machine.h). */
#include "proto_machine.h"

#include <stdlib.h>

void proto_machine_free(proto_machine *machine) {
  if (!machine)
    return;
  proto_map_free(&machine->clocks.index);
  tm_vec_free(&machine->clocks.items);
  proto_map_free(&machine->tracks.index);
  tm_vec_free(&machine->tracks.items);
  free(machine);
}
