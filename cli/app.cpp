#include "cli/app.h"

#include <exception>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/info_command.h"
#include "cli/run_command.h"

#ifndef HSCHED_VERSION
#define HSCHED_VERSION "unknown"
#endif

namespace hsched::cli {
namespace {

// One line, whatever the message holds: scripts and tests read stderr line by line.
int fail(std::ostream& err, const std::string& message) {
  std::string line = message;
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  err << "hsched: error: " << line << '\n';
  err.flush();
  return kExitError;
}

void add_info_flags(CLI::App& command, InfoArgs& args) {
  command
      .add_option("--input-shape", args.input_shapes,
                  "Fix the dims of a graph input: NAME=d1,d2,... (repeatable)")
      ->type_name("NAME=DIMS")
      ->allow_extra_args(false);
  command.add_flag("--json", args.json, "Print the report as JSON");
}

int run_checked(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"hsched: a heterogeneous inference scheduler", "hsched"};
  app.set_version_flag("--version", std::string("hsched ") + HSCHED_VERSION);
  app.require_subcommand(1);

  InfoArgs info_args;
  CLI::App* info = app.add_subcommand("info", "Import an ONNX model and report on it");
  info->add_option("MODEL", info_args.model_path, "ONNX model file")->required();
  add_info_flags(*info, info_args);

  InfoArgs demo_args;
  CLI::App* demo = app.add_subcommand("demo", "Build the built-in demo CNN and report on it");
  demo->add_flag("--json", demo_args.json, "Print the report as JSON");

  RunArgs run_args;
  CLI::App* run = app.add_subcommand("run", "Compile a model for the devices and run it, timed");
  run->add_option("MODEL", run_args.model_path, "ONNX model file")->required();
  run->add_option("--input-shape", run_args.input_shapes,
                  "Fix the dims of a graph input: NAME=d1,d2,... (repeatable)")
      ->type_name("NAME=DIMS")
      ->allow_extra_args(false);
  run->add_option("--devices", run_args.devices, "Devices to use, comma-separated (cpu)");
  run->add_option("--inputs", run_args.inputs_dir,
                  "Folder of input_K.pb tensors (default: seeded random inputs)");
  run->add_option("--outputs", run_args.outputs_dir, "Write output_K.pb tensors to this folder");
  run->add_option("--iterations", run_args.iterations, "Timed runs (default 10)");
  run->add_option("--warmup", run_args.warmup, "Untimed runs first (default 2)");
  run->add_option("--threads", run_args.threads, "CPU threads (default 2)");
  run->add_flag("--json", run_args.json, "Print the report as JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0; CLI11 prints them to `out`.
    if (e.get_exit_code() == 0) {
      std::ostringstream help_err;
      return app.exit(e, out, help_err);
    }
    return fail(err, e.what());
  }

  Result<std::string> report = info->parsed()  ? run_info(info_args)
                               : run->parsed() ? run_model(run_args)
                                               : run_demo(demo_args);
  if (!report.is_ok()) return fail(err, report.status().message());
  out << report.value();
  out.flush();
  return kExitOk;
}

}  // namespace

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  // Nothing a user gives may crash the program: anything thrown becomes the one error line.
  try {
    return run_checked(argc, argv, out, err);
  } catch (const std::exception& e) {
    return fail(err, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(err, "internal error: unknown exception");
  }
}

}  // namespace hsched::cli
