#include "cli/app.h"

#include <exception>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/calibrate_command.h"
#include "cli/devices_command.h"
#include "cli/info_command.h"
#include "cli/plan_command.h"
#include "cli/quantize_command.h"
#include "cli/run_command.h"
#include "cli/run_requests.h"
#include "hsched/version.h"

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

void add_input_shape_flag(CLI::App& command, std::vector<std::string>& input_shapes) {
  command
      .add_option("--input-shape", input_shapes,
                  "Fix the dims of a graph input: NAME=d1,d2,... (repeatable)")
      ->type_name("NAME=DIMS")
      ->allow_extra_args(false);
}

void add_info_flags(CLI::App& command, InfoArgs& args) {
  add_input_shape_flag(command, args.input_shapes);
  command.add_flag("--json", args.json, "Print the report as JSON");
}

// What to plan for: a deployment file, or a target and a policy; then --devices.
void add_plan_source_flags(CLI::App& command, PlanSourceArgs& args) {
  CLI::Option* config =
      command.add_option("--config", args.config, "Deployment file (configs/deploy/*.yaml)");
  CLI::Option* target = command.add_option(
      "--target", args.target, "Target: a name in configs/targets, a file, or this-machine");
  CLI::Option* policy = command.add_option(
      "--policy", args.policy, "Policy: a name in configs/policies or a file (default: default)");
  config->excludes(target)->excludes(policy);
  command.add_option("--devices", args.devices,
                     "Run on these devices (kinds, APIs or ids, comma-separated), the CPU taking "
                     "what they cannot");
  command.add_option("--precision", args.precision,
                     "With --devices and no --policy/--config: fp32 (default), fp16, bf16 or "
                     "int8 on the listed devices");
  // A callback, so that an empty value is seen as given (and refused).
  command.add_option_function<std::string>(
      "--split-every", [&args](const std::string& k) { args.split_every = k; },
      "Forced split for testing: alternate the policy's default devices every K nodes where "
      "supported, cost ignored (K in [1, 1000000])");
}

// MODEL, --input-shape and the plan source: what plan, report and run share.
void add_model_plan_flags(CLI::App& command, std::string& model_path,
                          std::vector<std::string>& input_shapes, PlanSourceArgs& source) {
  command.add_option("MODEL", model_path, "ONNX model file")->required();
  add_input_shape_flag(command, input_shapes);
  add_plan_source_flags(command, source);
}

// Examples, the environment and the exit codes, after every --help.
constexpr const char* kHelpFooter = R"(Examples:
  hsched devices                                    what this machine has
  hsched info model.onnx --input-shape images=1,3,640,640
  hsched report model.onnx --target core-ultra-7-155h -o report.html --format html
  hsched run model.onnx --devices opencl --iterations 100 --json
  hsched run model.onnx --config configs/deploy/core-ultra-7-155h.yaml --verify
  hsched calibrate -o my-laptop.yaml && hsched plan model.onnx --target my-laptop.yaml

Environment:
  HSCHED_CONFIGS_DIR      folder of shipped targets, policies and deployments (default: the
                          install's share/hsched/configs)
  HSCHED_CACHE_DIR        compiled OpenCL programs and NPU graphs (default ~/.cache/hsched)
  ZE_ENABLE_ALT_DRIVERS   Level Zero drivers to load instead of the system's (the simulated NPU)
  HSCHED_ZE_SIM_FAULTS    faults and behaviour of the simulated NPU driver (docs/npu-simulator.md)

Exit codes:
  0  success        2  any error: one line on stderr naming the file, node or flag)";

int run_checked(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"hsched: a heterogeneous inference scheduler", "hsched"};
  app.set_version_flag("--version", std::string("hsched ") + version());
  app.require_subcommand(1);
  app.footer(kHelpFooter);

  InfoArgs info_args;
  CLI::App* info = app.add_subcommand("info", "Import an ONNX model and report on it");
  info->add_option("MODEL", info_args.model_path, "ONNX model file")->required();
  add_info_flags(*info, info_args);

  InfoArgs demo_args;
  CLI::App* demo = app.add_subcommand("demo", "Build the built-in demo CNN and report on it");
  demo->add_flag("--json", demo_args.json, "Print the report as JSON");

  DevicesArgs devices_args;
  CLI::App* devices = app.add_subcommand("devices", "List the devices of this machine or a target");
  devices->add_option("--target", devices_args.target,
                      "A target name or file instead of this machine");
  devices->add_flag("--json", devices_args.json, "Print the devices as JSON");

  CalibrateArgs calibrate_args;
  CLI::App* calibrate = app.add_subcommand(
      "calibrate", "Measure this machine's devices and write a target profile for --target");
  calibrate->add_option("--devices", calibrate_args.devices,
                        "Devices to measure (kinds, APIs or ids, comma-separated; default: all)");
  calibrate->add_option("-o,--output", calibrate_args.output,
                        "Target profile to write (default calibration.yaml); its earlier "
                        "measurements are reused");
  calibrate->add_flag("--fresh", calibrate_args.fresh, "Measure everything again");
  calibrate->add_option("--threads", calibrate_args.threads,
                        "CPU threads (default: the physical cores this process may use)");
  calibrate->add_option("--rounds", calibrate_args.rounds,
                        "Alternating rounds (default 5; up to 5 more while they disagree)");
  calibrate
      ->add_option("--check", calibrate_args.check,
                   "Time this profile's probe again and print how far each device's speed "
                   "moved since it was calibrated (writes nothing)")
      ->excludes("--fresh")
      ->excludes("--output");

  PlanArgs plan_args;
  CLI::App* plan = app.add_subcommand("plan", "Schedule a model: where each node runs and why");
  add_model_plan_flags(*plan, plan_args.model_path, plan_args.input_shapes, plan_args.source);
  plan->add_flag("--json", plan_args.json, "Print the plan as JSON");
  plan->add_option("-o,--output", plan_args.output,
                   "Write the plan to this file (whole or not at all)");

  PlanArgs report_args;
  CLI::App* report = app.add_subcommand("report", "Schedule a model and print the fallback report");
  add_model_plan_flags(*report, report_args.model_path, report_args.input_shapes,
                       report_args.source);
  CLI::Option* report_format =
      report->add_option("--format", report_args.format, "text, json, dot or html (default text)");
  report->add_flag("--json", report_args.json, "The same as --format json")
      ->excludes(report_format);
  report->add_option("-o,--output", report_args.output,
                     "Write the report to this file (whole or not at all)");
  report->add_option("--trace", report_args.trace,
                     "HTML: draw the last request of this `hsched run --trace` file on the "
                     "timeline, measured beside predicted");

  RunArgs run_args;
  CLI::App* run = app.add_subcommand("run", "Compile a model for the devices and run it, timed");
  add_model_plan_flags(*run, run_args.model_path, run_args.input_shapes, run_args.source);
  run->add_option("--inputs", run_args.inputs_dir,
                  "Folder of input_K.pb tensors (default: seeded random inputs); dims the "
                  "model leaves open and no --input-shape fixes are taken from them");
  run->add_option("--outputs", run_args.outputs_dir, "Write output_K.pb tensors to this folder");
  run->add_option("--iterations", run_args.iterations, "Timed runs (default 10)");
  run->add_option("--warmup", run_args.warmup, "Untimed runs first (default 2)");
  run->add_option("--threads", run_args.threads,
                  "CPU threads (default: the physical cores this process may use)");
  run->add_option("--compile-timeout-ms", run_args.compile_timeout_ms,
                  "Per-partition compile deadline; past it the CPU takes the partition "
                  "(default: the deploy file's, else 30000)");
  run->add_flag("--json", run_args.json, "Print the report as JSON");
  run->add_flag("--profile", run_args.profile,
                "Time every step and each device partition's copies: time per op type and the "
                "slowest steps in the report");
  run->add_flag("--progressive", run_args.progressive,
                "Progressive start: run on the CPU at once while the plan compiles in the "
                "background, then on the plan (each request's plan is in --json and --trace)");
  run->add_flag("--verify", run_args.verify,
                "Check every non-CPU partition against the CPU in fp32; a failing one is "
                "quarantined to the CPU (also the policy's `verify`)");
  run->add_option("--memory-limit-mb", run_args.memory_limit_mb,
                  "Refuse a CPU program that would hold more than this much memory (weights, "
                  "folded constants, activations, outputs; default: the machine's memory)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  run->add_flag("--no-flush-denormals", run_args.keep_denormals,
                "Compute subnormal floats on the CPU instead of flushing them to zero (IEEE, "
                "and up to 60x slower where they occur)");
  run->add_option("--trace", run_args.trace_path,
                  "Write a Chrome trace-event JSON of the runs here (Perfetto, chrome://tracing)");
  run->add_option("--requests", run_args.requests,
                  "After the timed runs, N requests (seeded varying inputs, or --inputs repeated) "
                  "one by one, requests/s (N in [1, 100000])")
      ->check(CLI::Range(1, kMaxRequests));
  run->add_option("--mode", run_args.mode,
                  "latency (default): the requests one by one; throughput: also pipelined "
                  "across devices, with the speedup");

  QuantizeArgs quantize_args;
  CLI::App* quantize = app.add_subcommand(
      "quantize", "Quantize an fp32 model to int8 (QDQ), calibrated on inputs, and write it");
  quantize->add_option("MODEL", quantize_args.model_path, "ONNX model file")->required();
  quantize->add_option("-o,--output", quantize_args.output, "Quantized model to write")->required();
  add_input_shape_flag(*quantize, quantize_args.input_shapes);
  quantize->add_option("--calibration", quantize_args.calibration_dir,
                       "Folder of input_K.pb files, or of folders of them (test_data_set_*)");
  quantize->add_option("--random", quantize_args.random,
                       "Calibrate on N seeded random input sets instead (N in [1, 10000])");
  quantize->add_option("--activations", quantize_args.activations,
                       "u8 (default) or i8 activations, asymmetric");
  quantize->add_option("--percentile", quantize_args.percentile,
                       "Activation ranges keeping this percent of each tensor's values, e.g. "
                       "99.99 (default 100: min and max)");
  quantize->add_flag("--entropy", quantize_args.entropy,
                     "Activation ranges by entropy calibration: the clipping threshold whose "
                     "8-bit histogram loses least information (KL divergence)");
  quantize->add_flag("--per-tensor", quantize_args.per_tensor,
                     "One scale per weight tensor instead of one per output channel");
  quantize->add_option("--keep", quantize_args.keep,
                       "Leave these nodes in fp32: node names or op types (repeatable)");
  quantize->add_option("--threads", quantize_args.threads,
                       "CPU threads (default: the physical cores this process may use)");

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

  Result<std::string> result = info->parsed()        ? run_info(info_args)
                               : devices->parsed()   ? run_devices(devices_args)
                               : calibrate->parsed() ? run_calibrate(calibrate_args, err)
                               : plan->parsed()      ? run_plan(plan_args)
                               : report->parsed()    ? run_report(report_args)
                               : run->parsed()       ? run_model(run_args, err)
                               : quantize->parsed()  ? run_quantize(quantize_args)
                                                     : run_demo(demo_args);
  if (!result.is_ok()) return fail(err, result.status().message());
  out << result.value();
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
