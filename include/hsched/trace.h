// A compiled plan's runs as a Chrome trace-event file (opens in Perfetto or chrome://tracing).
//
//   std::vector<hsched::RunRecord> records(1);
//   exe->run(inputs, &records[0]);
//   auto trace = hsched::chrome_trace(exe->plan(), exe->stats(), records);
//   hsched::write_trace_file("run.json", trace);
//
// The format ({"traceEvents": [...], "displayTimeUnit": "ms"}): one process, one thread track
// per device id (named by "M" metadata events), "X" (complete) events with ts and dur in
// microseconds on the executor's time line (ms since compile() began):
//   cat "partition": one event per partition per request, on the device it ran on;
//                    args: request (index in `records`), partition, nodes, predicted_ms,
//                    planned_device when it ran elsewhere (quarantined);
//   cat "transfer":  "upload" (host -> device copies of its inputs) at the start and "download"
//                    (device -> host copies of its outputs) at the end of a device partition,
//                    inside it; args: bytes (upload: zero_copy_bytes too, read in place);
//   cat "verify":    the CPU reference run and the comparison of a verified partition, last
//                    thing inside it;
//   cat "compile":   one event per partition compile attempt (ExecutableStats::compiles), on
//                    its device; args: partition, error when it failed.
// Spans on one device that overlap without nesting (requests in flight at once, compiles in
// parallel) cannot share a thread track, so they go to extra tracks of that device named
// "<id> (2)", "<id> (3)"...; a run of one request at a time fits on one track per device.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "hsched/executor.h"
#include "hsched/plan.h"
#include "hsched/status.h"

namespace hsched {

// The trace as JSON text. `plan` is the plan the records ran (Executable::plan()); records may
// come from run() and run_stream() calls of one Executable, in any order.
std::string chrome_trace(const Plan& plan, const ExecutableStats& stats,
                         const std::vector<RunRecord>& records);

// Writes `trace` to `path` through a temporary file in the same folder and a rename: a failure
// leaves no file behind. InvalidArgument naming the path when it cannot be written.
Status write_trace_file(const std::filesystem::path& path, const std::string& trace);

}  // namespace hsched
