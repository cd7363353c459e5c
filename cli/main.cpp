#include <iostream>

#include "cli/app.h"
#include "cli/report_output.h"
#include "hsched/process.h"

int main(int argc, char** argv) {
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
