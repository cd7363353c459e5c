#include "cli/quantize_command.h"

#include <algorithm>
#include <filesystem>

#include "cli/run_command.h"
#include "hsched/model.h"
#include "hsched/quantize.h"

namespace hsched::cli {
namespace {

namespace fs = std::filesystem;

// The input sets of --calibration: DIR itself when it holds input_0.pb, else each folder in it
// that does, in name order.
Result<std::vector<std::vector<Tensor>>> load_calibration(const Model& model,
                                                          const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return invalid_argument("--calibration " + dir + ": no such folder");
  if (fs::exists(fs::path(dir) / "input_0.pb", ec)) {
    HSCHED_ASSIGN_OR_RETURN(std::vector<Tensor> set, load_inputs(model, dir));
    return std::vector<std::vector<Tensor>>{std::move(set)};
  }
  std::vector<fs::path> folders;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory(ec) && fs::exists(entry.path() / "input_0.pb", ec)) {
      folders.push_back(entry.path());
    }
  }
  if (folders.empty()) {
    return invalid_argument("--calibration " + dir +
                            ": no input_0.pb in it or in any folder in it");
  }
  std::sort(folders.begin(), folders.end());
  std::vector<std::vector<Tensor>> sets;
  for (const fs::path& folder : folders) {
    HSCHED_ASSIGN_OR_RETURN(std::vector<Tensor> set, load_inputs(model, folder.string()));
    sets.push_back(std::move(set));
  }
  return sets;
}

}  // namespace

Result<std::string> run_quantize(const QuantizeArgs& args) {
  if (args.calibration_dir.empty() == (args.random == 0)) {
    return invalid_argument("give one of --calibration DIR and --random N");
  }
  if (args.random < 0 || args.random > 10000) {
    return invalid_argument("--random " + std::to_string(args.random) + ": out of [1, 10000]");
  }
  if (args.activations != "u8" && args.activations != "i8") {
    return invalid_argument("--activations " + args.activations + ": u8 or i8");
  }
  ImportOptions import;
  for (const std::string& flag : args.input_shapes) {
    HSCHED_RETURN_IF_ERROR(add_input_shape_flag(flag, import));
  }
  HSCHED_ASSIGN_OR_RETURN(Model model, load_model(args.model_path, import));
  QuantizeOptions options;
  options.activations = args.activations == "u8" ? DType::kU8 : DType::kI8;
  options.per_channel = !args.per_tensor;
  options.keep = args.keep;
  options.cpu_threads = args.threads;
  options.percentile = args.percentile;
  options.entropy = args.entropy;
  if (args.random > 0) {
    for (int set = 0; set < args.random; ++set)
      options.calibration.push_back(seeded_inputs(model, set));
  } else {
    HSCHED_ASSIGN_OR_RETURN(options.calibration, load_calibration(model, args.calibration_dir));
  }
  HSCHED_ASSIGN_OR_RETURN(QuantizeSummary summary,
                          quantize_model(model, args.model_path, import, options, args.output));
  return args.model_path + " -> " + args.output + "\n" + quantize_summary_text(summary);
}

}  // namespace hsched::cli
