// The HTML report's per-device timeline of one predicted run: a lane per device of the plan and
// one for transfers; each partition a bar from its predicted start to its end, each transfer a
// bar from its producer's end for its predicted time. Internal to scheduler/report.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"
#include "hsched/plan.h"

namespace hsched::report {

// When each partition starts and ends in one predicted run (ms from the run's start): after the
// partition before it on its device and after every transfer into it, which starts when its
// producer ends.
struct PartitionSpan {
  double start_ms = 0;
  double end_ms = 0;
};
std::vector<PartitionSpan> predicted_spans(const Plan& plan);

// The timeline as an inline SVG element (id "timeline"), every bar with a tooltip.
std::string timeline_svg(const Graph& graph, const Plan& plan);

}  // namespace hsched::report
