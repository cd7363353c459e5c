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

#include "hsched/status.h"

namespace hsched::sched {

// The median of `values` (the mean of the middle two for an even count); 0 when empty.
double median_of(std::vector<double> values);

struct ProtocolOptions {
  int warmup = 2;  // untimed runs of each benchmark before the first round
  // Untimed runs at the start of each turn, for this long: the threads of the benchmark before
  // (TBB workers, OpenMP teams) spin on for a while.
  double settle_ms = 20;
  int rounds = 5;        // alternating rounds
  double round_ms = 60;  // a benchmark runs about this long per round ...
  int min_runs = 3;      // ... but at least this many times
  int max_runs = 200;    // and at most this many
  // Rounds agree where the median over the benchmarks of their spreads is at most this; while
  // the last `rounds` do not, another round runs, at most max_extra_rounds of them.
  double agreed_spread = 0.10;
  int max_extra_rounds = 5;
};

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

}  // namespace hsched::sched
