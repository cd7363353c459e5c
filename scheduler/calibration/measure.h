// The measurement protocol of calibration and bench/: every benchmark runs untimed first; then
// rounds, each running every benchmark in an order rotated by one per round, a benchmark's round
// figure being the median of its runs in that round; its result is the median of its round
// medians, and the spread of those round medians ((max - min) / median) is the noise seen.
// Rounds that disagree (a machine whose speed moved while it was measured) are run again: more
// rounds follow until the last `rounds` of them agree, and the figures come from the `rounds`
// consecutive rounds that agreed best.
#pragma once

#include <functional>
#include <vector>

#include "hsched/calibrate.h"
#include "hsched/status.h"

namespace hsched::calibration {

struct Measured {
  double ms = 0;      // median of round medians
  double spread = 0;  // (max - min) / median of the round medians
};

struct Measurement {
  std::vector<Measured> benches;  // as the benchmarks were given
  int rounds_run = 0;             // rounds run, extra ones included
  int first_round = 0;            // the figures' rounds: first_round .. + rounds (0-based)
  double noise = 0;               // the median of their spreads
  bool agreed = true;             // noise <= ProtocolOptions::agreed_spread
};

// One timed run of a benchmark: the figure it measured, ms (not necessarily its wall time: a
// benchmark reports the part of its run it is about). An error ends the measurement.
using BenchRun = std::function<Result<double>()>;

// The protocol above over `benches`; `progress(done, total)` after each benchmark's turn in a
// round (done counts turns, total = benches x rounds, growing by a round's turns per extra round).
Result<Measurement> measure_alternating(
    const std::vector<BenchRun>& benches, const ProtocolOptions& options,
    const std::function<void(int done, int total)>& progress = {});

}  // namespace hsched::calibration
