/*
 * Fires a trigger by name in every recording session of this user, in any
 * process (the equivalent of perfetto's trigger_perfetto):
 *
 *   record_fire_trigger NAME [PRODUCER_NAME]
 *
 * Prints how many sessions it reached; exit status 1 on error.
 */
#include <stdio.h>
#include <tracemerge/record.h>

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s NAME [PRODUCER_NAME]\n", argv[0]);
    return 2;
  }
  GError *error = NULL;
  int reached = tmr_trigger_send(argv[1], argc == 3 ? argv[2] : NULL, &error);
  if (reached < 0) {
    fprintf(stderr, "%s\n", error->message);
    g_error_free(error);
    return 1;
  }
  printf("trigger \"%s\" reached %d session%s\n", argv[1], reached, reached == 1 ? "" : "s");
  return 0;
}
