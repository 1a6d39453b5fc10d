/*
 * The Perfetto protobuf export: one trace holding every selected machine
 * of a merged model, written packet by packet with the recording
 * library's sequence writer (core/record/packet_writer.h).
 *
 * What the trace holds, per machine (its packets carry `machine_id`: the
 * first selected machine is the host, id 0; the others 1, 2, ... in
 * machine-row order):
 * - SystemInfo (machine_name, utsname, cpus, Android fields);
 * - clocks: timestamps are trace time, written as BOOTTIME. The host's
 *   ClockSnapshots claim BOOTTIME as trace time and carry the REALTIME
 *   readings of the merge's clock_snapshot rows (ts → REALTIME value);
 *   every other machine gets a RemoteClockSync that equates its BOOTTIME
 *   with the host's (offset 0: its events are already on trace time) and
 *   carries its REALTIME readings as client clocks;
 * - processes and threads (TrackDescriptors with ProcessDescriptor and
 *   ThreadDescriptor; parents and uids in a ProcessTree), packages;
 * - tracks: a thread's first thread_execution track is its thread track;
 *   every other track is a TrackDescriptor named as the track and parented
 *   to its thread's or process's track or its parent track, counter tracks
 *   with a CounterDescriptor;
 * - slices as TrackEvent begin/end pairs (a zero-length slice without
 *   children as an instant), nested exactly as in the model, with their
 *   category, name and args (debug annotations: an arg key `args.x` or
 *   `debug.x` is annotation `x`, any other key its whole self), and every
 *   flow row as a flow id on its source slice and a terminating flow id
 *   on its destination; counters as TrackEvent counter values;
 * - scheduling: ftrace bundles of sched_switch, sched_waking and
 *   sched_blocked_reason rebuilt from the sched and thread_state rows;
 * - cpu profile and Instruments samples as PerfSamples with interned
 *   callstacks; android logs as AndroidLogPackets (on REALTIME, through
 *   the machine's REALTIME readings).
 * Not written (no packet of the format carries them as rows): metadata
 * other than SystemInfo's, stats, import logs, ftrace_event (raw) rows,
 * frame timeline rows beyond their slices, thread start/end times.
 *
 * One trusted sequence per source: per (machine, trace file) for track
 * events, per machine for the rest; each sets its state (defaults,
 * interned entries, descriptors) before using it.
 */
#ifndef TM_PERFETTO_EXPORT_H
#define TM_PERFETTO_EXPORT_H

#include <glib.h>
#include <stdbool.h>

#include "export/export_selection.h"
#include "model/model.h"
#include "record/packet_writer.h"

/* Writes the selection of `model` through `out`. False (error set) if the
 * output failed. */
bool perfetto_export(const tm_model *model, const export_selection *sel, tmr_out_fn out,
                     void *user, GError **error);

#endif /* TM_PERFETTO_EXPORT_H */
