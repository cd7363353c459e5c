#include "scheduler/calibration/measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace hsched {

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace hsched

namespace hsched::calibration {

Result<Measurement> measure_alternating(const std::vector<BenchRun>& benches,
                                        const ProtocolOptions& options,
                                        const std::function<void(int done, int total)>& progress) {
  const size_t count = benches.size();
  std::vector<int> runs(count, options.min_runs);
  for (size_t b = 0; b < count; ++b) {
    std::vector<double> warm;
    for (int i = 0; i < std::max(1, options.warmup); ++i) {
      const auto start = std::chrono::steady_clock::now();
      HSCHED_RETURN_IF_ERROR(benches[b]().status());
      warm.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
    // Enough runs per round to fill round_ms, from the warm-up's wall time.
    const double per_run = std::max(1e-3, median_of(warm));
    runs[b] = std::clamp(static_cast<int>(std::ceil(options.round_ms / per_run)), options.min_runs,
                         options.max_runs);
  }
  std::vector<std::vector<double>> round_medians(count);
  const int rounds = std::max(1, options.rounds);
  // The medians and spreads of rounds first .. first + rounds of every benchmark, and the median
  // of those spreads.
  const auto window = [&](int first) {
    Measurement m;
    m.first_round = first;
    std::vector<double> spreads;
    for (const auto& all : round_medians) {
      const std::vector<double> medians(all.begin() + first, all.begin() + first + rounds);
      Measured& result = m.benches.emplace_back();
      result.ms = median_of(medians);
      if (result.ms > 0) {
        const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
        result.spread = (*hi - *lo) / result.ms;
      }
      spreads.push_back(result.spread);
    }
    m.noise = median_of(std::move(spreads));
    m.agreed = m.noise <= options.agreed_spread;
    return m;
  };
  int total = static_cast<int>(count) * rounds;
  int done = 0;
  for (int round = 0;; ++round) {
    if (round >= rounds) {
      if (window(round - rounds).agreed ||
          round >= rounds + std::max(0, options.max_extra_rounds)) {
        break;
      }
      total += static_cast<int>(count);
    }
    for (size_t i = 0; i < count; ++i) {
      const size_t b = (i + static_cast<size_t>(round)) % count;
      const auto settle = std::chrono::steady_clock::now();
      while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - settle)
                 .count() < options.settle_ms) {
        HSCHED_RETURN_IF_ERROR(benches[b]().status());
      }
      std::vector<double> samples;
      for (int r = 0; r < runs[b]; ++r) {
        HSCHED_ASSIGN_OR_RETURN(double ms, benches[b]());
        samples.push_back(ms);
      }
      round_medians[b].push_back(median_of(samples));
      if (progress) progress(++done, total);
    }
  }
  const int rounds_run = count == 0 ? rounds : static_cast<int>(round_medians[0].size());
  Measurement best;
  for (int first = 0; first + rounds <= rounds_run; ++first) {
    Measurement candidate = window(first);
    if (first == 0 || candidate.noise < best.noise) best = std::move(candidate);
  }
  best.rounds_run = rounds_run;
  return best;
}

}  // namespace hsched::calibration
