/* ProcessTree packets (see proto_process_tree.h). */
#include "proto_process_tree.h"

#include <string.h>

#include "proto_context.h"
#include "trace.pb-c.h"

static void read_process(proto_context *ctx, proto_machine *machine,
                         const Perfetto__Protos__ProcessTree__Process *p) {
  const tm_host_services *s = ctx->s;
  if (p->n_cmdline == 0)
    return;
  tm_process_ref process = s->process(ctx->host, machine->ref, p->pid);
  /* A lone element may be a whole command line: its name ends at the
   * first space. */
  const char *first = p->cmdline[0];
  size_t name_len = strlen(first);
  if (p->n_cmdline == 1 && !p->cmdline_is_comm) {
    const char *space = strchr(first, ' ');
    if (space)
      name_len = (size_t)(space - first);
  }
  s->process_set_name(ctx->host, process, proto_intern(ctx, first, name_len));
  size_t total = 0;
  for (size_t i = 0; i < p->n_cmdline; i++)
    total += strlen(p->cmdline[i]) + 1;
  char *cmdline = proto_xrealloc(NULL, total);
  size_t at = 0;
  for (size_t i = 0; i < p->n_cmdline; i++) {
    if (i)
      cmdline[at++] = ' ';
    size_t len = strlen(p->cmdline[i]);
    memcpy(cmdline + at, p->cmdline[i], len);
    at += len;
  }
  s->process_set_cmdline(ctx->host, process, proto_intern(ctx, cmdline, at));
  free(cmdline);
  if (p->has_ppid)
    s->process_set_parent(ctx->host, process, s->process(ctx->host, machine->ref, p->ppid));
  if (p->has_uid)
    s->process_set_uid(ctx->host, process, p->uid);
  if (p->has_is_kthread)
    s->process_add_arg(
        ctx->host, process, proto_intern_cstr(ctx, "is_kthread"),
        (tm_arg_value){.type = TM_ARG_BOOL, .u.int_value = p->is_kthread ? 1 : 0});
}

bool proto_process_tree_read(proto_context *ctx, proto_machine *machine,
                             const uint8_t *data, size_t len) {
  Perfetto__Protos__ProcessTree *tree =
      perfetto__protos__process_tree__unpack(NULL, len, data);
  if (!tree)
    return false;
  for (size_t i = 0; i < tree->n_processes; i++)
    read_process(ctx, machine, tree->processes[i]);
  const tm_host_services *s = ctx->s;
  for (size_t i = 0; i < tree->n_threads; i++) {
    const Perfetto__Protos__ProcessTree__Thread *t = tree->threads[i];
    if (!t->has_tid || !t->has_tgid)
      continue; /* a thread is always attached to its process */
    tm_thread_ref thread = s->thread(ctx->host, machine->ref, t->tgid, t->tid);
    if (t->name && *t->name)
      s->thread_set_name(ctx->host, thread, proto_intern_cstr(ctx, t->name));
  }
  perfetto__protos__process_tree__free_unpacked(tree, NULL);
  return true;
}
