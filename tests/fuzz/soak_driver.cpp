// hsched_soak: the long-running process of scripts/soak.sh. Plans the shared models for the CPU
// and the simulated NPU (policy npu-offload, verification on), then sends a seeded mix of
// requests until the time is up, one Executable per model:
//   run() on the reference inputs            (the outputs checked every --check-every requests)
//   run() on other seeded inputs             (not checked: no reference)
//   run_stream() of 2 to 4 requests          (the first checked with the run() cadence)
// after a warm-up pass that sends each kind at its largest and recompiles once per model.
//   run() from 2 threads at once             (both checked with the run() cadence)
// Each Executable is compiled again every --recompile-every requests to it (compile and tear-down
// are part of what must not leak). Device faults: the simulated driver's HSCHED_ZE_SIM_FAULTS
// apply to the whole process (scripts/soak.sh runs episodes with each key); here, besides, one
// NPU partition run in --fault-every (0: never) gets its outputs corrupted or fails through
// the executor's test hook (ScopedDeviceOutputHook), which the executor must catch (verification, quarantine)
// while the request still ends with correct outputs.
//
// Prints one progress line every --report-every seconds and, at the end:
//   soak: requests R checked C mismatches M errors E recompiles K planted_faults F quarantines Q
// Exit 0 when M and E are 0, 1 otherwise, 2 on bad arguments or a model that does not load.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/device.h"
#include "graph/onnx_import.h"
#include "graph/tensor_proto.h"
#include "scheduler/runtime/compile.h"
#include "scheduler/planner/schedule.h"
#include "hsched/config.h"
#include "scheduler/config/discover.h"

namespace {

namespace fs = std::filesystem;
using namespace hsched;
using Clock = std::chrono::steady_clock;

constexpr int kMaxStream = 4;  // requests of one run_stream()

struct Args {
  fs::path models_dir;
  std::vector<std::string> models = {"squeezenet1_1", "mobilenet_v3_small", "bert_mini"};
  double seconds = 60;
  int check_every = 2;
  int recompile_every = 25;
  int fault_every = 50;
  double report_every = 10;
  uint32_t seed = 1;
  std::string cache_dir;
  int64_t compile_timeout_ms = 30000;
};

struct Model {
  std::string name;
  std::unique_ptr<Graph> graph;
  std::vector<Tensor> inputs;
  std::vector<Tensor> references;
  std::unique_ptr<Executable> exe;
  int requests_since_compile = 0;
};

struct Counters {
  std::atomic<int64_t> requests{0}, checked{0}, mismatches{0}, errors{0}, recompiles{0}, planted{0},
      quarantines{0};
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    if (!item.empty()) items.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

bool parse_args(int argc, char** argv, Args& args) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const std::string value = argv[i + 1];
    if (key == "--models-dir")
      args.models_dir = value;
    else if (key == "--models")
      args.models = split_list(value);
    else if (key == "--seconds")
      args.seconds = std::atof(value.c_str());
    else if (key == "--check-every")
      args.check_every = std::atoi(value.c_str());
    else if (key == "--recompile-every")
      args.recompile_every = std::atoi(value.c_str());
    else if (key == "--fault-every")
      args.fault_every = std::atoi(value.c_str());
    else if (key == "--report-every")
      args.report_every = std::atof(value.c_str());
    else if (key == "--seed")
      args.seed = static_cast<uint32_t>(std::atoll(value.c_str()));
    else if (key == "--cache-dir")
      args.cache_dir = value;
    else if (key == "--compile-timeout-ms")
      args.compile_timeout_ms = std::atoll(value.c_str());
    else
      return false;
  }
  return argc % 2 == 1 && !args.models_dir.empty() && !args.models.empty() && args.seconds > 0 &&
         args.check_every > 0 && args.recompile_every > 0 && args.fault_every >= 0;
}

std::vector<Tensor> read_set(const fs::path& dir, const std::string& prefix) {
  std::vector<Tensor> tensors;
  for (int k = 0;; ++k) {
    const fs::path path = dir / (prefix + std::to_string(k) + ".pb");
    if (!fs::exists(path)) break;
    Result<Tensor> tensor = read_tensor_file(path);
    if (!tensor.is_ok()) {
      std::fprintf(stderr, "hsched_soak: %s\n", tensor.status().message().c_str());
      std::exit(2);
    }
    tensors.push_back(std::move(tensor).value());
  }
  return tensors;
}

// |a-b| <= 5e-2 + 5e-2|b| on every element (fp16 NPU partitions), exact for integer outputs.
bool outputs_match(const std::vector<Tensor>& got, const std::vector<Tensor>& want,
                   std::string* why) {
  if (got.size() != want.size()) {
    *why = std::to_string(got.size()) + " outputs, expected " + std::to_string(want.size());
    return false;
  }
  for (size_t k = 0; k < want.size(); ++k) {
    if (got[k].dims() != want[k].dims() || got[k].dtype() != want[k].dtype()) {
      *why = "output " + std::to_string(k) + ": shape or dtype differs";
      return false;
    }
    if (want[k].dtype() != DType::kF32) continue;
    const auto a = got[k].values<float>();
    const auto b = want[k].values<float>();
    for (size_t i = 0; i < a.size(); ++i) {
      if (!(std::abs(a[i] - b[i]) <= 5e-2 + 5e-2 * std::abs(b[i]))) {
        *why = "output " + std::to_string(k) + " element " + std::to_string(i) + ": " +
               std::to_string(a[i]) + " vs " + std::to_string(b[i]);
        return false;
      }
    }
  }
  return true;
}

// Reference inputs with every float scaled by `scale` (a request the references do not cover).
std::vector<Tensor> varied_inputs(const std::vector<Tensor>& inputs, float scale) {
  std::vector<Tensor> varied;
  for (const Tensor& input : inputs) {
    Tensor copy = input.clone();
    if (copy.dtype() == DType::kF32) {
      for (float& v : copy.values<float>()) v *= scale;
    }
    varied.push_back(std::move(copy));
  }
  return varied;
}

class Soak {
 public:
  Soak(const Args& args, Target target, Policy policy)
      : args_(args), target_(std::move(target)), policy_(std::move(policy)), rng_(args.seed) {}

  bool load(const std::string& name) {
    const fs::path dir = args_.models_dir / name;
    Result<Graph> graph = import_onnx_file(dir / "model.onnx", {});
    if (!graph.is_ok()) {
      std::fprintf(stderr, "hsched_soak: %s\n", graph.status().message().c_str());
      return false;
    }
    Model model;
    model.name = name;
    model.graph = std::make_unique<Graph>(std::move(graph).value());
    model.inputs = read_set(dir / "test_data_set_0", "input_");
    model.references = read_set(dir / "test_data_set_0", "output_");
    if (model.inputs.empty() || model.references.empty()) {
      std::fprintf(stderr, "hsched_soak: %s: no test_data_set_0\n", dir.c_str());
      return false;
    }
    models_.push_back(std::move(model));
    return compile_model(models_.back());
  }

  // Every request kind at its largest once per model, and one recompile each, before the mix:
  // the high-water mark of memory is reached here, so that the RSS after the warm-up compares
  // like with like.
  bool warm_up() {
    for (Model& model : models_) {
      for (uint32_t kind = 0; kind < 4; ++kind) request(model, kind, kMaxStream);
      model.exe.reset();
      if (!compile_model(model)) return false;
      for (uint32_t kind = 0; kind < 4; ++kind) request(model, kind, kMaxStream);
    }
    return true;
  }

  void run_until(Clock::time_point end) {
    auto next_report = Clock::now();
    while (Clock::now() < end) {
      Model& model = models_[rng_() % models_.size()];
      if (model.requests_since_compile >= args_.recompile_every) {
        counters_.quarantines += static_cast<int64_t>(model.exe->quarantines().size());
        model.exe.reset();
        if (!compile_model(model)) return;
        ++counters_.recompiles;
      }
      request(model, rng_() % 4);
      if (Clock::now() >= next_report) {
        report("progress");
        next_report = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(args_.report_every));
      }
    }
    for (const Model& model : models_) {
      counters_.quarantines += static_cast<int64_t>(model.exe->quarantines().size());
    }
  }

  void report(const char* what) const {
    std::printf(
        "soak: %s requests %lld checked %lld mismatches %lld errors %lld recompiles %lld "
        "planted_faults %lld quarantines %lld\n",
        what, static_cast<long long>(counters_.requests.load()),
        static_cast<long long>(counters_.checked.load()),
        static_cast<long long>(counters_.mismatches.load()),
        static_cast<long long>(counters_.errors.load()),
        static_cast<long long>(counters_.recompiles.load()),
        static_cast<long long>(counters_.planted.load()),
        static_cast<long long>(counters_.quarantines.load()));
    std::fflush(stdout);
  }

  bool failed() const { return counters_.mismatches > 0 || counters_.errors > 0; }

 private:
  bool compile_model(Model& model) {
    Result<Plan> plan = schedule(*model.graph, target_, policy_);
    if (!plan.is_ok()) {
      std::fprintf(stderr, "hsched_soak: %s: %s\n", model.name.c_str(),
                   plan.status().message().c_str());
      return false;
    }
    ExecutorOptions options;
    options.cache_dir = args_.cache_dir;
    options.compile_timeout_ms = args_.compile_timeout_ms;
    options.verify = true;
    options.cpu_threads = 1;
    const runtime::ScopedDeviceOutputHook hook([this](int, std::vector<Tensor>& outputs) -> Status {
      if (args_.fault_every == 0 || ++device_runs_ % args_.fault_every != 0) return Status::ok();
      ++counters_.planted;
      if ((device_runs_ / args_.fault_every) % 2 == 0) {
        return internal_error("soak: planted device failure");
      }
      for (Tensor& t : outputs) {  // a wrong result verification must catch
        if (t.dtype() != DType::kF32) continue;
        for (float& v : t.values<float>()) v = v * 3.0f + 1.0f;
      }
      return Status::ok();
    });
    auto exe = compile(*model.graph, *plan, options);
    if (!exe.is_ok()) {
      std::fprintf(stderr, "hsched_soak: %s: %s\n", model.name.c_str(),
                   exe.status().message().c_str());
      return false;
    }
    model.exe = std::move(exe).value();
    model.requests_since_compile = 0;
    return true;
  }

  void check(const Model& model, const Result<std::vector<Tensor>>& outputs, bool compare) {
    ++counters_.requests;
    if (!outputs.is_ok()) {
      ++counters_.errors;
      std::fprintf(stderr, "hsched_soak: %s: request failed: %s\n", model.name.c_str(),
                   outputs.status().message().c_str());
      return;
    }
    if (!compare) return;
    ++counters_.checked;
    std::string why;
    if (!outputs_match(*outputs, model.references, &why)) {
      ++counters_.mismatches;
      std::fprintf(stderr, "hsched_soak: %s: wrong output: %s\n", model.name.c_str(), why.c_str());
    }
  }

  // `stream`: the requests of a run_stream() (kind 2); 0 for 2 to kMaxStream, at random.
  void request(Model& model, uint32_t kind, int stream = 0) {
    const bool compare = ++checks_due_ % args_.check_every == 0;
    ++model.requests_since_compile;
    switch (kind) {
      case 0:
        check(model, model.exe->run(model.inputs), compare);
        break;
      case 1:
        check(model, model.exe->run(varied_inputs(model.inputs, 0.5f + (rng_() % 8) * 0.125f)),
              false);
        break;
      case 2: {
        const int size = stream > 0 ? stream : 2 + static_cast<int>(rng_() % (kMaxStream - 1));
        std::vector<std::vector<Tensor>> batch(static_cast<size_t>(size), model.inputs);
        auto results = model.exe->run_stream(batch);
        if (!results.is_ok()) {
          check(model, results.status(), false);
          break;
        }
        for (size_t i = 0; i < results->size(); ++i) {
          check(model, std::move((*results)[i]), compare && i == 0);
        }
        break;
      }
      default: {
        Result<std::vector<Tensor>> other = internal_error("not run");
        std::thread second([&] { other = model.exe->run(model.inputs); });
        const auto first = model.exe->run(model.inputs);
        second.join();
        check(model, first, compare);
        check(model, other, compare);
        break;
      }
    }
  }

  const Args& args_;
  Target target_;
  Policy policy_;
  std::mt19937 rng_;
  std::vector<Model> models_;
  Counters counters_;
  std::atomic<int64_t> device_runs_{0};
  int64_t checks_due_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse_args(argc, argv, args)) {
    std::fprintf(stderr,
                 "usage: %s --models-dir DIR [--models a,b] [--seconds S] [--check-every K] "
                 "[--recompile-every N] [--fault-every N] [--report-every S] [--seed N] "
                 "[--cache-dir DIR] [--compile-timeout-ms MS]\n",
                 argv[0]);
    return 2;
  }
  Target target = config::discover_target(
      {[] { return std::vector<DeviceProfile>{cpu::cpu_profile(cpu::probe_cpu())}; },
       [] { return config::backends().find(DeviceApi::kLevelZero)->discover(); }});
  Result<Policy> policy = resolve_policy("npu-offload");
  if (!policy.is_ok()) {
    std::fprintf(stderr, "hsched_soak: %s\n", policy.status().message().c_str());
    return 2;
  }
  std::printf("soak: devices");
  for (const DeviceProfile& device : target.devices) std::printf(" %s", device.id.c_str());
  std::printf("\n");
  Soak soak(args, std::move(target), std::move(policy).value());
  for (const std::string& name : args.models) {
    if (!soak.load(name)) return 2;
  }
  if (!soak.warm_up()) return 2;
  soak.report("warmed-up");
  soak.run_until(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(args.seconds)));
  soak.report("done");
  return soak.failed() ? 1 : 0;
}
