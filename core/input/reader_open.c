/* Opening a reader with its version's services; see reader_open.h. */
#include "input/reader_open.h"

#include "input/host_services.h"

void *host_open_reader(tm_host *host, const uint8_t *config, size_t config_len) {
  const tm_reader *reader = host->reader;
  if (reader->abi == TM_READER_ABI_V1)
    return reader->open_v1(host_services_v1(), host, config, config_len);
  return reader->descriptor.open(&host_services_v2, host, config, config_len);
}
