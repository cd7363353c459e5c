// The HTML report's per-device timeline of one predicted run: a lane per device of the plan and
// one for transfers; each partition a bar from its predicted start to its end, each transfer a
// bar from its producer's end for its predicted time. Internal to scheduler/report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "hsched/plan.h"
#include "hsched/status.h"

namespace hsched::report {

// When each partition starts and ends in one predicted run (ms from the run's start): after the
// partition before it on its device and after every transfer into it, which starts when its
// producer ends.
struct PartitionSpan {
  double start_ms = 0;
  double end_ms = 0;
};
std::vector<PartitionSpan> predicted_spans(const Plan& plan);

// What a run measured, from its Chrome trace (`hsched run --trace`, hsched/trace.h): the spans of
// its last request, ms from that request's start.
struct MeasuredSpan {
  std::string device;  // the device it ran on
  std::string label;   // "p3" for a partition, "upload 1204 B" for a copy
  bool transfer = false;
  double start_ms = 0;
  double end_ms = 0;
};
struct MeasuredRun {
  int64_t request = 0;
  std::vector<MeasuredSpan> spans;
};
// InvalidArgument naming what is wrong when `trace` is not such a trace or has no request.
Result<MeasuredRun> measured_run(const std::string& trace);

// The timeline as an inline SVG element (id "timeline"), every bar with a tooltip; with
// `measured`, its lanes below the predicted ones, on the same scale.
std::string timeline_svg(const Graph& graph, const Plan& plan,
                         const MeasuredRun* measured = nullptr);

}  // namespace hsched::report
