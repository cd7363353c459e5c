#include "backends/cpu/backend.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <mutex>
#include <thread>
#include <utility>

#include "backends/capability_rules.h"
#include "backends/cpu/kernel.h"
#include "backends/cpu/norm_fusion.h"
#include "backends/cpu/program.h"

namespace hsched::cpu {
namespace {

// Estimates, stated once: a core streams about 8 GB/s from DRAM and a desktop/laptop memory
// system saturates between ~10 and ~100 GB/s. A oneDNN primitive or TBB parallel loop costs a
// few microseconds to dispatch. `hsched calibrate` replaces all of these with measurements.
constexpr double kBandwidthPerCoreGbps = 8;
constexpr double kMinBandwidthGbps = 8;
constexpr double kMaxBandwidthGbps = 100;
constexpr double kCpuLaunchOverheadMs = 0.002;
constexpr double kCpuCompileMsPerNode = 0.05;  // primitive creation and weight reorders
constexpr double kConvLinearEfficiency = 0.6;  // oneDNN conv/matmul at batch 1
constexpr double kDefaultEfficiency = 0.3;     // TBB kernels
constexpr double kFallbackGhz = 2.0;

// The precision the CPU kernel library computes in today.
constexpr Precision kCpuPrecision = Precision::kFp32;

// The value of the first "key : value" line of /proc/cpuinfo with this key, or "".
std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    if (name != key) continue;
    const size_t start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return {};
}

double probe_ghz() {
  std::ifstream max_freq("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");  // kHz
  double khz = 0;
  if (max_freq >> khz && khz > 0) return khz / 1e6;
  try {
    const double mhz = std::stod(cpuinfo_field("cpu MHz"));
    // Rounded to 0.1 GHz: the current clock wanders between reads, plans should not.
    if (mhz > 0 && std::isfinite(mhz)) return std::round(mhz / 100) / 10;
  } catch (const std::exception&) {
  }
  return kFallbackGhz;
}

int probe_fp32_flop_per_cycle() {
#if defined(__x86_64__) || defined(__i386__)
  // A multiply-add is 2 FLOP: AVX-512 with one FMA unit and AVX2 with two both give 32.
  if (__builtin_cpu_supports("fma") &&
      (__builtin_cpu_supports("avx512f") || __builtin_cpu_supports("avx2"))) {
    return 32;
  }
  if (__builtin_cpu_supports("avx")) return 16;
#endif
  return 8;
}

class CpuPartition final : public Program {
 public:
  CpuPartition(std::unique_ptr<CpuProgram> program, std::string device)
      : program_(std::move(program)), device_(std::move(device)) {}
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs, CopyRecord*) override {
    return program_->run(inputs);
  }
  void append_profile(std::vector<hsched::StepProfile>& steps) const override {
    for (const StepProfile& step : program_->profile()) {
      steps.push_back({step.node, step.op, step.mean_ms, device_, std::nullopt});
    }
  }
  void reset_profile() override { program_->reset_profile(); }

 private:
  std::unique_ptr<CpuProgram> program_;
  std::string device_;
};

class CpuDevice final : public Device {
 public:
  explicit CpuDevice(DeviceProfile profile) : profile_(std::move(profile)) {}
  const DeviceProfile& profile() const override { return profile_; }

  std::optional<Rejection> check(const Graph& graph, NodeId node,
                                 Precision precision) const override {
    const Node& n = graph.node(node);
    if (auto rejection = check_default_domain(graph, node, profile_, precision)) return rejection;
    if (!kernels().supports(n.op_type)) {
      // Worded as the CPU program words it when compiling, so both read the same.
      return Rejection{node, profile_.id, precision, ReasonCode::kOpUnsupported,
                       "the CPU backend has no kernel for op '" + n.op_type + "'"};
    }
    if (auto rejection = check_op_listed(graph, node, profile_, precision)) return rejection;
    if (precision != kCpuPrecision) {
      return Rejection{node, profile_.id, precision, ReasonCode::kPrecisionNotAllowed,
                       std::string("the CPU backend computes fp32 only (no ") +
                           precision_name(precision) + " kernels yet)"};
    }
    return check_precision_listed(graph, node, profile_, precision);
  }

  // Folded, aliased and fused nodes cost nothing; a fused normalization chain costs one
  // normalization (over an image's channels: a class of its own).
  StepHints step_hints(const Graph& graph) const override {
    StepHints hints;
    std::vector<std::string> step_ops;
    hints.free = nodes_without_steps(graph, &step_ops);
    hints.as_class.resize(step_ops.size());
    for (size_t n = 0; n < step_ops.size(); ++n) {
      if (step_ops[n] == kGroupNormOp) hints.as_class[n] = CostClass::kNormalization;
      if (step_ops[n] == kChannelLayerNormOp) hints.as_class[n] = CostClass::kChannelNorm;
    }
    return hints;
  }

  Result<std::shared_ptr<Program>> compile(const Graph& part,
                                           const CompileOptions& options) override {
    CpuOptions cpu_options;
    // CompileOptions' 0 means every core (backend.h); CpuProgram wants a count.
    cpu_options.threads = options.cpu_threads > 0
                              ? options.cpu_threads
                              : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    cpu_options.profile = options.profile;
    cpu_options.flush_denormals = options.flush_denormals;
    cpu_options.memory_limit_bytes = options.memory_limit_bytes;
    HSCHED_ASSIGN_OR_RETURN(auto compiled, CpuProgram::compile(part, cpu_options));
    return std::shared_ptr<Program>(std::make_shared<CpuPartition>(std::move(compiled),
                                                                   profile_.id));
  }

 private:
  // The kernel library of this build, made on the first check.
  const KernelRegistry& kernels() const {
    std::call_once(kernels_made_, [this] { kernels_ = make_cpu_kernel_registry(); });
    return kernels_;
  }

  DeviceProfile profile_;
  mutable std::once_flag kernels_made_;
  mutable KernelRegistry kernels_;
};

class CpuBackend final : public Backend {
 public:
  DeviceApi api() const override { return DeviceApi::kHost; }
  std::vector<DeviceProfile> discover() const override { return {cpu_profile(probe_cpu())}; }
  std::unique_ptr<Device> open(const DeviceProfile& profile, const DeviceContext&) const override {
    return std::make_unique<CpuDevice>(profile);
  }
};

}  // namespace

CpuFacts probe_cpu() {
  CpuFacts facts;
  facts.name = cpuinfo_field("model name");
  if (facts.name.empty()) facts.name = "CPU";
  facts.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  facts.ghz = probe_ghz();
  facts.fp32_flop_per_cycle = probe_fp32_flop_per_cycle();
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0) facts.memory_bytes = int64_t{pages} * page_size;
  return facts;
}

DeviceProfile cpu_profile(const CpuFacts& facts) {
  DeviceProfile cpu;
  cpu.id = "cpu0";
  cpu.name = facts.name + " (" + std::to_string(facts.cores) + " threads, discovered)";
  cpu.kind = DeviceKind::kCpu;
  cpu.api = DeviceApi::kHost;
  cpu.present = true;
  cpu.peak_gflops[Precision::kFp32] = facts.cores * facts.ghz * facts.fp32_flop_per_cycle;
  cpu.efficiency[OpClass::kConvLinear] = kConvLinearEfficiency;
  cpu.default_efficiency = kDefaultEfficiency;
  cpu.memory_bandwidth_gbps =
      std::clamp(facts.cores * kBandwidthPerCoreGbps, kMinBandwidthGbps, kMaxBandwidthGbps);
  cpu.launch_overhead_ms = kCpuLaunchOverheadMs;
  cpu.zero_copy = true;  // the host: its memory is the one graph inputs and outputs live in
  cpu.memory_bytes = facts.memory_bytes;
  cpu.compile_ms_per_node = kCpuCompileMsPerNode;
  cpu.ops = {"*"};
  return cpu;
}

std::unique_ptr<Backend> make_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace hsched::cpu
