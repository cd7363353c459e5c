// Calibration (`hsched calibrate`): microbenchmarks run through the real backends and executor on
// one present device, turned into that device's measured profile: a curve of time against size
// per cost class and precision (include/hsched/device.h), the per-partition run overhead, copy
// curves for devices that copy, and compile costs. The cost model interpolates the curves.
// The measurement protocol: ProtocolOptions below (scheduler/calibration/measure.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hsched/device.h"
#include "hsched/status.h"
#include "hsched/threads.h"

namespace hsched {

// The median of `values` (the mean of the middle two for an even count); 0 when empty.
double median_of(std::vector<double> values);

// How calibration and bench/ measure (scheduler/calibration/measure.h has the protocol).
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

struct CalibrateOptions {
  int cpu_threads = default_cpu_threads();  // as `hsched run --threads`: measured as it runs
  ProtocolOptions protocol;
  std::string cache_dir;  // compiled OpenCL programs, as ExecutorOptions::cache_dir
  // Earlier measurements of this device (the same name, locator and thread count) are reused
  // bench by bench unless `fresh`.
  bool fresh = false;
  // Where not empty, only these benchmarks, each kept as a probe: a check of an earlier
  // calibration (check_device).
  std::vector<std::string> only;
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
  // Whether the rounds the figures came from agreed (measure.h), even after the extra rounds:
  // when not, the device's speed moved while it was measured and its figures may be off.
  bool rounds_agreed = true;
  std::string rounds;  // "5 rounds (6-10 of 10: the rounds disagreed), median spread +-15%"
};

// Calibrates `device` (present on this machine). `host` is the host CPU's profile (plans need a
// last resort; for the CPU itself pass it twice). `previous` is the same device's profile from
// an earlier calibration, or nullptr.
Result<CalibrationReport> calibrate_device(const DeviceProfile& device, const DeviceProfile& host,
                                           const DeviceProfile* previous,
                                           const CalibrateOptions& options);

// How far a device's speed moved since it was calibrated: its profile's probe timed again.
struct SpeedCheck {
  std::vector<std::string> lines;  // per probe: its time then and now
  double ratio = 1;                // median over the probes of now / then: above 1, slower now
  double lowest = 1;               // the probes' lowest and highest now / then
  double highest = 1;
  int probes = 0;
};

// Times the probe of `calibrated` (an earlier calibration of `device`, with the same CPU thread
// count as `options`) again with the calibration's protocol. An error where the profile has no
// probe or none of its benchmarks runs now.
Result<SpeedCheck> check_device(const DeviceProfile& device, const DeviceProfile& host,
                                const DeviceProfile& calibrated, const CalibrateOptions& options);

}  // namespace hsched
