// Speed of planner::partition(): random DAGs of 1,000 and 10,000 nodes on 3 devices, and the
// placement problem of each shared model on a Meteor Lake-like CPU + iGPU + NPU (figures close
// to configs/targets/core-ultra-7-155h.yaml, built here so the benchmark needs no config files).
// Counters: nodes, predicted ms of the plan found, partitions.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "graph/onnx_import.h"
#include "scheduler/planner/cost_model.h"
#include "scheduler/planner/partitioner.h"
#include "support/random_problem.h"

namespace hsched::planner {
namespace {

constexpr int64_t kExpectedRuns = 100;

DeviceProfile device(std::string id, DeviceKind kind, DeviceApi api,
                     std::map<Precision, double> peak_gflops, double launch_ms, double sync_ms,
                     double compile_ms_per_node, double compile_ms_per_partition,
                     std::vector<std::string> ops) {
  DeviceProfile profile;
  profile.id = std::move(id);
  profile.kind = kind;
  profile.api = api;
  profile.present = false;
  profile.peak_gflops = std::move(peak_gflops);
  profile.efficiency = {{OpClass::kConvLinear, 0.5}, {OpClass::kDataMovement, 0.1}};
  profile.default_efficiency = 0.2;
  profile.memory_bandwidth_gbps = 120;  // LPDDR5x shared by all three
  profile.launch_overhead_ms = launch_ms;
  profile.zero_copy = true;
  profile.transfer_latency_ms = sync_ms;
  profile.compile_ms_per_node = compile_ms_per_node;
  profile.compile_ms_per_partition = compile_ms_per_partition;
  profile.ops = std::move(ops);
  return profile;
}

Target meteor_lake_like() {
  Target target{"bench-meteor-lake", "partition_bench.cpp", {}};
  target.devices.push_back(device("cpu0", DeviceKind::kCpu, DeviceApi::kHost,
                                  {{Precision::kFp32, 600}}, 0.003, 0, 0.1, 0, {"*"}));
  target.devices.push_back(device("gpu0", DeviceKind::kGpu, DeviceApi::kOpenCl,
                                  {{Precision::kFp32, 4500}, {Precision::kFp16, 9000}}, 0.008,
                                  0.005, 0.2, 2, {"*"}));
  target.devices.push_back(device("npu0", DeviceKind::kNpu, DeviceApi::kLevelZero,
                                  {{Precision::kFp16, 5500}}, 0.002, 0.05, 10, 500,
                                  {"Conv",
                                   "ConvTranspose",
                                   "Gemm",
                                   "MatMul",
                                   "MaxPool",
                                   "AveragePool",
                                   "GlobalAveragePool",
                                   "BatchNormalization",
                                   "LayerNormalization",
                                   "Softmax",
                                   "Add",
                                   "Sub",
                                   "Mul",
                                   "Div",
                                   "Relu",
                                   "Sigmoid",
                                   "HardSigmoid",
                                   "HardSwish",
                                   "Clip",
                                   "Tanh",
                                   "Erf",
                                   "Gelu",
                                   "Reshape",
                                   "Flatten",
                                   "Transpose",
                                   "Concat"}));
  return target;
}

// The precision each device computes in here: the CPU fp32, the others fp16.
Precision precision_on(const DeviceProfile& device) {
  return device.peak_gflops.count(Precision::kFp16) != 0 ? Precision::kFp16 : Precision::kFp32;
}

// Links from CostModel::transfer_ms, which is latency + bytes / bandwidth per pair.
LinkCost link_between(const CostModel& model, const DeviceProfile& from, const DeviceProfile& to) {
  constexpr int64_t kGigabyte = 1'000'000'000;
  const double latency_ms = model.transfer_ms(0, from, to);
  const double ms_per_gb = model.transfer_ms(kGigabyte, from, to) - latency_ms;
  return {latency_ms, ms_per_gb > 0 ? 1e3 / ms_per_gb : 0};
}

PlacementProblem problem_of(const Graph& graph, const Target& target) {
  const CostModel model(target, kExpectedRuns);
  PlacementProblem problem;
  problem.device_count = static_cast<int>(target.devices.size());
  problem.host_device = 0;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.nodes().size()); ++n) {
    std::vector<double>& ms = problem.node_ms.emplace_back();
    for (const DeviceProfile& d : target.devices) {
      ms.push_back(d.supports_op(graph.node(n).op_type)
                       ? model.node_ms(graph, n, d, precision_on(d))
                       : kNotAllowed);
    }
  }
  std::vector<char> is_output(graph.values().size(), 0);
  for (ValueId v : graph.outputs()) is_output[static_cast<size_t>(v)] = 1;
  for (size_t v = 0; v < graph.values().size(); ++v) {
    const Value& value = graph.values()[v];
    if (value.is_constant()) continue;  // weights are placed at compile time, not per run
    problem.values.push_back(
        {value.producer, value.consumers, value.byte_size(), is_output[v] != 0});
  }
  for (const DeviceProfile& from : target.devices) {
    std::vector<LinkCost>& row = problem.links.emplace_back();
    for (const DeviceProfile& to : target.devices) row.push_back(link_between(model, from, to));
    problem.partition_overhead_ms.push_back(model.partition_overhead_ms(from));
  }
  problem.order = graph.topological_order().value();
  return problem;
}

void run_partition(benchmark::State& state, const PlacementProblem& problem) {
  Assignment assignment;
  for (auto _ : state) {
    assignment = partition(problem);
    benchmark::DoNotOptimize(assignment.cost_ms);
  }
  state.counters["nodes"] = static_cast<double>(problem.node_ms.size());
  state.counters["predicted_ms"] = assignment.cost_ms;
  state.counters["partitions"] =
      static_cast<double>(group_partitions(problem, assignment.device_of).partitions.size());
}

void BM_RandomDag(benchmark::State& state) {
  const PlacementProblem problem = test::random_problem(7, static_cast<int>(state.range(0)), 3);
  run_partition(state, problem);
}
BENCHMARK(BM_RandomDag)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

std::filesystem::path models_dir() {
  const char* env = std::getenv("HSCHED_MODELS_DIR");
  return env != nullptr && *env != '\0' ? std::filesystem::path(env)
                                        : std::filesystem::path(HSCHED_MODELS_DIR);
}

// One benchmark per shared model found; an absent or unreadable model is skipped with a note.
void register_models() {
  static const Target kTarget = meteor_lake_like();
  for (const char* name : {"resnet18", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1",
                           "convnext_atto", "vit_tiny", "bert_mini", "vae_decoder_small"}) {
    const std::filesystem::path path = models_dir() / name / "model.onnx";
    if (!std::filesystem::exists(path)) continue;
    Result<Graph> graph = import_onnx_file(path, ImportOptions{});
    if (!graph.is_ok()) {
      std::fprintf(stderr, "skipping %s: %s\n", name, graph.status().message().c_str());
      continue;
    }
    benchmark::RegisterBenchmark((std::string("BM_Model/") + name).c_str(),
                                 [problem = problem_of(graph.value(), kTarget)](
                                     benchmark::State& state) { run_partition(state, problem); })
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace
}  // namespace hsched::planner

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  hsched::planner::register_models();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
