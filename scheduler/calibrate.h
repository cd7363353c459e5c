// Calibration (`hsched calibrate`): microbenchmarks run through the real backends and executor on
// one present device, turned into that device's measured profile: a curve of time against size
// per cost class and precision (include/hsched/device.h), the per-partition run overhead, copy
// curves for devices that copy, and compile costs. The cost model interpolates the curves.
//
// Measurement protocol (also bench/'s): every benchmark runs untimed first; then rounds, each
// running every benchmark in an order rotated by one per round, a benchmark's round figure being
// the median of its runs in that round; its result is the median of its round medians, and the
// spread of those round medians ((max - min) / median) is the noise seen.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hsched/device.h"
#include "hsched/status.h"

namespace hsched::sched {

struct ProtocolOptions {
  int warmup = 2;  // untimed runs of each benchmark before the first round
  // Untimed runs at the start of each turn, for this long: the threads of the benchmark before
  // (TBB workers, OpenMP teams) spin on for a while.
  double settle_ms = 20;
  int rounds = 5;        // alternating rounds
  double round_ms = 60;  // a benchmark runs about this long per round ...
  int min_runs = 3;      // ... but at least this many times
  int max_runs = 200;    // and at most this many
};

struct Measured {
  double ms = 0;      // median of round medians
  double spread = 0;  // (max - min) / median of the round medians
};

// One timed run of a benchmark: the figure it measured, ms (not necessarily its wall time: a
// benchmark reports the part of its run it is about). An error ends the measurement.
using BenchRun = std::function<Result<double>()>;

// The protocol above over `benches`; `progress(done, total)` after each benchmark's turn in a
// round (done counts turns, total = benches x rounds).
Result<std::vector<Measured>> measure_alternating(
    const std::vector<BenchRun>& benches, const ProtocolOptions& options,
    const std::function<void(int done, int total)>& progress = {});

struct CalibrateOptions {
  int cpu_threads = 2;  // as `hsched run --threads`: the CPU is measured as it will run
  ProtocolOptions protocol;
  std::string cache_dir;  // compiled OpenCL programs, as ExecutorOptions::cache_dir
  // Earlier measurements of this device (the same name, locator and thread count) are reused
  // bench by bench unless `fresh`.
  bool fresh = false;
  // After each benchmark's turn: what is being measured, turns done, turns in all.
  std::function<void(const std::string& what, int done, int total)> progress;
};

// What calibration found, beside the profile: one line per figure with its noise, and how many
// benchmarks were measured now or reused.
struct CalibrationReport {
  DeviceProfile profile;
  std::vector<std::string>
      lines;  // "conv fp32  conv_k3_c64_h56  231 MFLOP  1.05 ms  220 GFLOP/s  ±3%"
  int measured = 0;
  int reused = 0;
  int skipped = 0;  // benchmarks the device could not run (unsupported op or precision)
};

// Calibrates `device` (present on this machine). `host` is the host CPU's profile (plans need a
// last resort; for the CPU itself pass it twice). `previous` is the same device's profile from
// an earlier calibration, or nullptr.
Result<CalibrationReport> calibrate_device(const DeviceProfile& device, const DeviceProfile& host,
                                           const DeviceProfile* previous,
                                           const CalibrateOptions& options);

}  // namespace hsched::sched
