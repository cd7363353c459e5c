#include <stdlib.h>
#include <unistd.h>

#include <iostream>

#include "cli/app.h"
#include "cli/report_output.h"
#include "hsched/process.h"

namespace {

// oneDNN runs on libgomp, whose threads spin after each primitive for a time fixed when libgomp
// loads (before main). Left at its default they spin through the oneTBB kernels that follow and
// fight the TBB workers for the same cores (vit_tiny: 20x slower). A short spin keeps oneDNN's
// back-to-back primitives fast and lets the cores go to TBB soon after (docs/runtime.md,
// Threading). The setting only takes effect in a fresh process, so the program starts itself once
// more with it.
// A user who sets GOMP_SPINCOUNT or OMP_WAIT_POLICY keeps their choice.
constexpr const char* kGompSpinCount = "30000";

void start_with_short_omp_spin(char** argv) {
  if (getenv("GOMP_SPINCOUNT") != nullptr || getenv("OMP_WAIT_POLICY") != nullptr) return;
  setenv("GOMP_SPINCOUNT", kGompSpinCount, 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then run as we are
}

}  // namespace

int main(int argc, char** argv) {
  start_with_short_omp_spin(argv);
  hsched::cli::ReportOutput output;  // standard output for the command's output alone
  int code = hsched::cli::run(argc, argv, output.stream(), std::cerr);
  if (!output.flush()) {
    std::cerr << "hsched: error: writing standard output failed\n";
    if (code == 0) code = 1;
  }
  // Through exit_process: a driver call abandoned past its deadline may still be running, and
  // static destructors must not run under it.
  hsched::exit_process(code);
}
