// `hsched calibrate`: microbenchmarks on the devices of this machine, written as a target profile
// (scheduler/calibration/calibrate.h) that `--target FILE` and deploy files use.
#pragma once

#include <ostream>
#include <string>

#include "hsched/status.h"
#include "hsched/threads.h"

namespace hsched::cli {

struct CalibrateArgs {
  std::string devices;  // selectors as --devices; empty: every present device
  std::string output = "calibration.yaml";
  bool fresh = false;  // measure everything again
  int threads = default_cpu_threads();  // CPU threads, as `hsched run --threads`
  int rounds = 5;
  std::string check;  // a profile whose probe is timed again (nothing written); empty: calibrate
};

// The measured figures, one line each with its noise; a progress bar on `err`. With `check`:
// per device of that profile found here, how far its speed moved since (hsched::SpeedCheck).
Result<std::string> run_calibrate(const CalibrateArgs& args, std::ostream& err);

}  // namespace hsched::cli
