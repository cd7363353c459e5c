#include "scheduler/quantize/calibrate_ranges.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <vector>

#include <onnx/onnx_pb.h>

#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "hsched/config.h"
#include "hsched/executor.h"
#include "hsched/schedule.h"

namespace hsched {
namespace {

Status check_input_set(const Model& model, const std::vector<Tensor>& inputs, size_t set) {
  const std::vector<TensorInfo> infos = model.inputs();
  const std::string where = "calibration input set " + std::to_string(set);
  if (inputs.size() != infos.size()) {
    return invalid_argument(where + ": " + std::to_string(inputs.size()) +
                            " tensors, the model takes " + std::to_string(infos.size()));
  }
  for (size_t k = 0; k < infos.size(); ++k) {
    if (inputs[k].dtype() != infos[k].dtype || inputs[k].dims() != infos[k].shape.dims) {
      return invalid_argument(
          where + ": input '" + infos[k].name + "' is " + std::string(dtype_name(infos[k].dtype)) +
          " " + infos[k].shape.to_string() + ", the set holds " +
          std::string(dtype_name(inputs[k].dtype())) + " " + inputs[k].shape().to_string());
    }
  }
  return Status::ok();
}

// Widens `range` by a float tensor's values; false on a NaN or infinity.
bool widen(Range& range, const Tensor& tensor) {
  for (float v : tensor.values<float>()) {
    if (!std::isfinite(v)) return false;
    range.min = std::min(range.min, v);
    range.max = std::max(range.max, v);
  }
  return true;
}

// Counts of a tensor's values over its MinMax range, in equal bins.
class Histogram {
 public:
  explicit Histogram(const Range& range) : range_(range), counts_(kBins, 0) {}

  void add(const Tensor& tensor) {
    const float width = range_.max - range_.min;
    for (float v : tensor.values<float>()) {
      const float at = width > 0 ? (v - range_.min) / width * kBins : 0.0f;
      ++counts_[static_cast<size_t>(std::clamp(at, 0.0f, static_cast<float>(kBins - 1)))];
      ++total_;
    }
  }

  // The range keeping `percentile` % of the values: (100 - percentile) / 2 % cut from each end
  // (at bin edges), widened to include 0.
  Range keep(double percentile) const {
    const double cut = static_cast<double>(total_) * (100.0 - percentile) / 200.0;
    const float width = (range_.max - range_.min) / kBins;
    size_t low = 0;
    for (double seen = 0; low + 1 < kBins && seen + static_cast<double>(counts_[low]) <= cut;) {
      seen += static_cast<double>(counts_[low++]);
    }
    size_t high = kBins - 1;
    for (double seen = 0; high > low && seen + static_cast<double>(counts_[high]) <= cut;) {
      seen += static_cast<double>(counts_[high--]);
    }
    return {std::min(0.0f, range_.min + width * static_cast<float>(low)),
            std::max(0.0f, range_.min + width * static_cast<float>(high + 1))};
  }

 private:
  static constexpr size_t kBins = 2048;
  Range range_;
  std::vector<int64_t> counts_;
  int64_t total_ = 0;
};

// Counts of a tensor's |values| from 0 to its largest magnitude, in equal bins, for the entropy
// calibration (TensorRT's): the threshold whose clipped distribution, quantized to the levels the
// 8-bit type gives that side of 0, is closest to the distribution as seen.
class MagnitudeHistogram {
 public:
  explicit MagnitudeHistogram(const Range& range)
      : range_(range), magnitude_(std::max(-range.min, range.max)), counts_(kBins, 0) {}

  void add(const Tensor& tensor) {
    for (float v : tensor.values<float>()) {
      const float at = magnitude_ > 0 ? std::fabs(v) / magnitude_ * kBins : 0.0f;
      ++counts_[static_cast<size_t>(std::min(at, static_cast<float>(kBins - 1)))];
    }
  }

  // The range cut at the threshold of least Kullback-Leibler divergence between the kept bins
  // (those past it added to the last) and the same bins merged into `levels` groups, each
  // group's count spread evenly over its non-empty bins: 255 levels for a tensor on one side of 0
  // (all of u8's steps), 128 for one on both.
  Range threshold() const {
    const bool one_sided = range_.min >= 0 || range_.max <= 0;
    const size_t levels = one_sided ? 255 : 128;
    // Zero is exact under any range (the zero point): the spike a Relu leaves in the first bin
    // says nothing about where to cut, and would pull the threshold towards it.
    std::vector<int64_t> counts = counts_;
    counts[0] = counts[1];
    size_t best = kBins;
    double best_divergence = std::numeric_limits<double>::infinity();
    std::vector<double> p(kBins), q(kBins);
    double outliers = 0;  // the counts past the candidate threshold
    for (size_t keep = kBins; keep >= levels; --keep) {
      if (keep < kBins) outliers += static_cast<double>(counts[keep]);
      const double divergence = divergence_at(counts, keep, levels, outliers, p, q);
      if (divergence < best_divergence) {
        best_divergence = divergence;
        best = keep;
      }
    }
    const float cut = magnitude_ * static_cast<float>(best) / kBins;
    return {std::max(range_.min, -cut), std::min(range_.max, cut)};
  }

 private:
  static double divergence_at(const std::vector<int64_t>& counts, size_t keep, size_t levels,
                              double outliers, std::vector<double>& p, std::vector<double>& q) {
    double p_total = 0;
    for (size_t b = 0; b < keep; ++b) p_total += p[b] = static_cast<double>(counts[b]);
    p[keep - 1] += outliers;
    p_total += outliers;
    if (p_total == 0) return std::numeric_limits<double>::infinity();
    double q_total = 0;
    for (size_t g = 0; g < levels; ++g) {
      const size_t begin = g * keep / levels, end = (g + 1) * keep / levels;
      double sum = 0;
      size_t filled = 0;
      for (size_t b = begin; b < end; ++b) {
        sum += static_cast<double>(counts[b]);
        filled += counts[b] != 0 ? 1 : 0;
      }
      for (size_t b = begin; b < end; ++b) {
        q[b] = counts[b] != 0 ? sum / static_cast<double>(filled) : 0.0;
        q_total += q[b];
      }
    }
    // A kept bin with values that the merged bins leave empty (the last, holding the outliers)
    // gets a floor rather than an infinite divergence.
    constexpr double kFloor = 1e-9;
    double divergence = 0;
    for (size_t b = 0; b < keep; ++b) {
      if (p[b] == 0) continue;
      const double pb = p[b] / p_total;
      const double qb = q_total > 0 ? std::max(q[b] / q_total, kFloor) : kFloor;
      divergence += pb * std::log(pb / qb);
    }
    return divergence;
  }

  static constexpr size_t kBins = 2048;
  Range range_;
  float magnitude_;
  std::vector<int64_t> counts_;
};

}  // namespace

Result<std::map<std::string, Range>> calibrate_ranges(const onnx::ModelProto& original,
                                                      const QuantizePlan& plan, const Model& model,
                                                      const ImportOptions& import,
                                                      const QuantizeOptions& options,
                                                      const std::string& display,
                                                      const std::filesystem::path& base_dir) {
  onnx::ModelProto probe = original;
  std::set<std::string> outputs;
  for (const onnx::ValueInfoProto& output : probe.graph().output()) outputs.insert(output.name());
  // Every set checked once, before the model is compiled or run.
  for (size_t set = 0; set < options.calibration.size(); ++set) {
    HSCHED_RETURN_IF_ERROR(check_input_set(model, options.calibration[set], set));
  }
  const std::vector<TensorInfo> model_inputs = model.inputs();
  std::map<std::string, size_t> input_index;
  for (size_t k = 0; k < model_inputs.size(); ++k) input_index[model_inputs[k].name] = k;
  for (const ActivationQuant& act : plan.activations) {
    if (input_index.count(act.tensor) || !outputs.insert(act.tensor).second) continue;
    // The checker wants a shape: the one hsched inferred (the planner takes ranked values only).
    const Value& value = model.graph().value(*model.graph().find_value(act.tensor));
    onnx::ValueInfoProto* output = probe.mutable_graph()->add_output();
    output->set_name(act.tensor);
    set_tensor_type(*output, DType::kF32, value.shape.dims);
  }
  HSCHED_ASSIGN_OR_RETURN(Graph graph, import_onnx_model(probe, import, display, base_dir));
  const Model tapped(std::make_shared<const Graph>(std::move(graph)), display);
  std::map<std::string, size_t> output_index;
  const std::vector<TensorInfo> tapped_outputs = tapped.outputs();
  for (size_t k = 0; k < tapped_outputs.size(); ++k) output_index[tapped_outputs[k].name] = k;

  HSCHED_ASSIGN_OR_RETURN(Plan run_plan, schedule(tapped, discover_target_for("cpu"),
                                                  devices_policy("cpu", Precision::kFp32)));
  ExecutorOptions executor;
  executor.cpu_threads = options.cpu_threads;
  HSCHED_ASSIGN_OR_RETURN(std::unique_ptr<Executable> program, compile(tapped, run_plan, executor));

  // Runs every input set and shows each tensor to quantize to `visit` (tensor, value, set).
  using Visit = std::function<Status(const std::string&, const Tensor&, size_t)>;
  const auto run_all = [&](const Visit& visit) -> Status {
    for (size_t set = 0; set < options.calibration.size(); ++set) {
      const std::vector<Tensor>& inputs = options.calibration[set];
      HSCHED_ASSIGN_OR_RETURN(std::vector<Tensor> values, program->run(inputs));
      for (const ActivationQuant& act : plan.activations) {
        const auto in = input_index.find(act.tensor);
        HSCHED_RETURN_IF_ERROR(visit(
            act.tensor,
            in != input_index.end() ? inputs[in->second] : values.at(output_index.at(act.tensor)),
            set));
      }
    }
    return Status::ok();
  };

  std::map<std::string, Range> ranges;
  HSCHED_RETURN_IF_ERROR(run_all([&](const std::string& tensor, const Tensor& value, size_t set) {
    if (widen(ranges[tensor], value)) return Status::ok();
    return invalid_argument(display + ": tensor '" + tensor +
                            "' holds a non-finite value on calibration input set " +
                            std::to_string(set) + "; it cannot be quantized");
  }));
  if (options.entropy) {
    std::map<std::string, MagnitudeHistogram> magnitudes;
    for (const auto& [tensor, range] : ranges) magnitudes.emplace(tensor, MagnitudeHistogram(range));
    HSCHED_RETURN_IF_ERROR(run_all([&](const std::string& tensor, const Tensor& value, size_t) {
      magnitudes.at(tensor).add(value);
      return Status::ok();
    }));
    for (auto& [tensor, range] : ranges) range = magnitudes.at(tensor).threshold();
    return ranges;
  }
  if (options.percentile >= 100) return ranges;

  std::map<std::string, Histogram> histograms;
  for (const auto& [tensor, range] : ranges) histograms.emplace(tensor, Histogram(range));
  HSCHED_RETURN_IF_ERROR(run_all([&](const std::string& tensor, const Tensor& value, size_t) {
    histograms.at(tensor).add(value);
    return Status::ok();
  }));
  for (auto& [tensor, range] : ranges) range = histograms.at(tensor).keep(options.percentile);
  return ranges;
}

}  // namespace hsched
