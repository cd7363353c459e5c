// The measurement protocol on fake benchmarks, and a calibrated profile surviving the trip
// through YAML (what `hsched calibrate` writes is what --target reads).
#include "scheduler/calibration/calibrate.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hsched/config.h"
#include "scheduler/calibration/calibrate_specs.h"
#include "scheduler/config/discover.h"

namespace hsched::calibration {
namespace {

TEST(MeasureAlternatingTest, MedianOfRoundMediansAndTheirSpread) {
  // Bench 0 returns 1, 2, 3, ...: each round's median moves with the calls made so far.
  int calls = 0;
  std::vector<int> order;
  const std::vector<BenchRun> benches{[&]() -> Result<double> {
                                        order.push_back(0);
                                        return static_cast<double>(++calls);
                                      },
                                      [&]() -> Result<double> {
                                        order.push_back(1);
                                        return 5.0;
                                      }};
  ProtocolOptions options;
  options.warmup = 1;
  options.rounds = 3;
  options.min_runs = options.max_runs = 3;
  options.settle_ms = 0;
  options.max_extra_rounds = 0;
  int turns = 0;
  auto measured = measure_alternating(benches, options, [&](int, int total) {
    ++turns;
    EXPECT_EQ(total, 6);
  });
  ASSERT_TRUE(measured.is_ok()) << measured.status().message();
  EXPECT_EQ(turns, 6);
  EXPECT_EQ(measured->rounds_run, 3);
  EXPECT_DOUBLE_EQ(measured->benches[1].ms, 5.0);
  EXPECT_DOUBLE_EQ(measured->benches[1].spread, 0.0);
  // Warm-up took call 1; rounds saw 2-4, 5-7, 8-10: medians 3, 6, 9.
  EXPECT_DOUBLE_EQ(measured->benches[0].ms, 6.0);
  EXPECT_DOUBLE_EQ(measured->benches[0].spread, 1.0);
  EXPECT_DOUBLE_EQ(measured->noise, 0.5);  // the median of 1 and 0
  // Rounds alternate, and the order rotates: round 2 starts with bench 1.
  ASSERT_GE(order.size(), 8u);
  EXPECT_EQ(order[2], 0);  // after the two warm-ups, round 1 starts with bench 0
  EXPECT_EQ(order[8], 1);  // round 2 starts with bench 1
}

// One timed run per round, returning `figures` in turn after one warm-up call.
BenchRun figures_in_turn(std::vector<double> figures, int* calls) {
  return [figures = std::move(figures), calls]() -> Result<double> {
    const size_t at = static_cast<size_t>((*calls)++);
    return at == 0 ? 1.0 : figures.at(std::min(at - 1, figures.size() - 1));
  };
}

ProtocolOptions one_run_rounds(int rounds) {
  ProtocolOptions options;
  options.warmup = 1;
  options.rounds = rounds;
  options.min_runs = options.max_runs = 1;
  options.settle_ms = 0;
  return options;
}

TEST(MeasureAlternatingTest, RoundsThatDisagreeAreRunAgainUntilTheyAgree) {
  // A machine that was slow for the first two rounds, then steady.
  int calls = 0;
  const std::vector<BenchRun> benches{figures_in_turn({10, 2, 1, 1.05, 1, 1}, &calls)};
  int last_total = 0;
  auto measured =
      measure_alternating(benches, one_run_rounds(3), [&](int, int total) { last_total = total; });
  ASSERT_TRUE(measured.is_ok()) << measured.status().message();
  // Rounds 1-3 (10, 2, 1) and 2-4 (2, 1, 1.05) disagree; 3-5 (1, 1.05, 1) agree: no sixth.
  EXPECT_EQ(measured->rounds_run, 5);
  EXPECT_EQ(last_total, 5);
  EXPECT_EQ(measured->first_round, 2);
  EXPECT_DOUBLE_EQ(measured->benches[0].ms, 1.0);
  EXPECT_NEAR(measured->benches[0].spread, 0.05, 1e-12);
  EXPECT_NEAR(measured->noise, 0.05, 1e-12);
}

TEST(MeasureAlternatingTest, ExtraRoundsAreBoundedAndTheBestAgreeingRoundsKept) {
  // Never steady, rounds 2-4 agreeing best: 30% against 80% and 38% for 1-3 and 3-5.
  int calls = 0;
  const std::vector<BenchRun> benches{figures_in_turn({1, 2, 2.6, 2, 3, 1, 3, 1}, &calls)};
  ProtocolOptions options = one_run_rounds(3);
  options.max_extra_rounds = 2;
  auto measured = measure_alternating(benches, options);
  ASSERT_TRUE(measured.is_ok()) << measured.status().message();
  EXPECT_EQ(measured->rounds_run, 5);
  EXPECT_EQ(calls, 6);  // the warm-up and five rounds
  EXPECT_EQ(measured->first_round, 1);
  EXPECT_DOUBLE_EQ(measured->benches[0].ms, 2.0);
  EXPECT_NEAR(measured->noise, 0.3, 1e-12);
}

TEST(MeasureAlternatingTest, AnErrorEndsTheMeasurement) {
  const std::vector<BenchRun> benches{
      []() -> Result<double> { return Status(ErrorCode::kInternal, "device lost"); }};
  EXPECT_FALSE(measure_alternating(benches, {}).is_ok());
}

// The benchmarks `hsched calibrate` runs on a device of `api` (computing fp32) for which `keep`
// holds.
template <typename Keep>
std::vector<Spec> specs_on(DeviceApi api, Keep keep) {
  DeviceProfile device;
  device.api = api;
  device.peak_gflops[Precision::kFp32] = 100;
  std::vector<Spec> found;
  for (Spec& spec : specs_for(device)) {
    if (keep(spec)) found.push_back(std::move(spec));
  }
  return found;
}

// On the CPU a global pool is timed in a model's setting (right after a Conv wrote its input);
// another device's in a fan over one tensor, every node of it counted.
TEST(CalibrationSpecsTest, TheHostTimesGlobalPoolsAfterAConv) {
  const auto pools = [](DeviceApi api) {
    return specs_on(api,
                    [](const Spec& spec) { return spec.cost_class == CostClass::kGlobalPool; });
  };
  const std::vector<Spec> host = pools(DeviceApi::kHost);
  ASSERT_EQ(host.size(), 7u);
  for (const Spec& spec : host) {
    EXPECT_EQ(spec.timed_op, "GlobalAveragePool") << spec.name;
    EXPECT_NE(spec.name.find("after_conv"), std::string::npos) << spec.name;
  }
  const std::vector<Spec> gpu = pools(DeviceApi::kOpenCl);
  ASSERT_EQ(gpu.size(), 7u);
  for (const Spec& spec : gpu) EXPECT_TRUE(spec.timed_op.empty()) << spec.name;
}

// The CPU times products by weights as a model's linear layers run there (bias added in the
// product's epilogue); a GPU, which adds a bias in a kernel of its own, times them bare. Both
// time the rectangular shapes of transformers' MLP layers.
TEST(CalibrationSpecsTest, TheHostTimesLinearLayersWithTheirBias) {
  const auto products = [](DeviceApi api) {
    return specs_on(api, [](const Spec& spec) {
      return spec.cost_class == CostClass::kGemm && !spec.quantized &&
             spec.name.find("attention") == std::string::npos;
    });
  };
  for (DeviceApi api : {DeviceApi::kHost, DeviceApi::kOpenCl}) {
    const bool host = api == DeviceApi::kHost;
    const std::vector<Spec> specs = products(api);
    ASSERT_EQ(specs.size(), 12u + 8u);
    int rectangular = 0;
    for (const Spec& spec : specs) {
      OnnxBuilder builder(17, spec.name);
      spec.build(builder, 2);
      int matmuls = 0, adds = 0;
      for (const onnx::NodeProto& node : builder.model().graph().node()) {
        matmuls += node.op_type() == "MatMul" ? 1 : 0;
        adds += node.op_type() == "Add" ? 1 : 0;
      }
      EXPECT_EQ(matmuls, 2) << spec.name;
      EXPECT_EQ(adds, host ? 2 : 0) << spec.name;
      EXPECT_EQ(spec.name.rfind(host ? "linear_" : "matmul_", 0), 0u) << spec.name;
      rectangular += spec.name.find("_k") != std::string::npos ? 1 : 0;
    }
    EXPECT_EQ(rectangular, 8) << (host ? "host" : "OpenCL");
  }
}

// The CPU times stems and strided convolutions in fans of their own whose outputs a global pool
// keeps small, the Convs' steps alone; a GPU has no such curves (its conv curves serve).
TEST(CalibrationSpecsTest, TheHostTimesStemsAndStridedConvsApart) {
  const auto finer = [](DeviceApi api) {
    std::map<CostClass, std::vector<Spec>> found;
    for (Spec& spec : specs_on(api, [](const Spec& spec) {
           return spec.cost_class == CostClass::kStemConv ||
                  spec.cost_class == CostClass::kStridedConv ||
                  spec.cost_class == CostClass::kStridedDepthwiseConv;
         })) {
      found[spec.cost_class].push_back(std::move(spec));
    }
    return found;
  };
  EXPECT_TRUE(finer(DeviceApi::kOpenCl).empty());
  const auto host = finer(DeviceApi::kHost);
  ASSERT_EQ(host.size(), 3u);
  EXPECT_EQ(host.at(CostClass::kStemConv).size(), 6u);
  EXPECT_EQ(host.at(CostClass::kStridedConv).size(), 9u);
  EXPECT_EQ(host.at(CostClass::kStridedDepthwiseConv).size(), 8u);
  for (const auto& [cost_class, specs] : host) {
    for (const Spec& spec : specs) {
      EXPECT_EQ(spec.timed_op, "Conv") << spec.name;
      OnnxBuilder builder(17, spec.name);
      spec.build(builder, 2);
      const auto& nodes = builder.model().graph().node();
      ASSERT_GT(nodes.size(), spec.work_node) << spec.name;
      const onnx::NodeProto& conv = nodes[spec.work_node];
      EXPECT_EQ(conv.op_type(), "Conv") << spec.name;
      EXPECT_EQ(conv.input(0) == "x", cost_class == CostClass::kStemConv) << spec.name;
      for (const onnx::NodeProto& node : nodes) {
        if (node.output(0).rfind("y", 0) == 0) {
          EXPECT_EQ(node.op_type(), "GlobalAveragePool") << spec.name;
        }
      }
    }
  }
}

// The CPU times QuantizeLinear and DequantizeLinear as a QDQ model runs them where no quantized
// layer takes them in: steps of their own between float layers (an InstanceNormalization), each
// op's steps profiled alone. Other devices cost them as elementwise ops.
TEST(CalibrationSpecsTest, TheHostTimesQuantizeStepsBetweenFloatLayers) {
  EXPECT_TRUE(specs_on(DeviceApi::kOpenCl, [](const Spec& spec) {
                return spec.cost_class == CostClass::kQuantize;
              }).empty());
  const std::vector<Spec> specs = specs_on(
      DeviceApi::kHost, [](const Spec& spec) { return spec.cost_class == CostClass::kQuantize; });
  ASSERT_EQ(specs.size(), 12u);
  for (const Spec& spec : specs) {
    OnnxBuilder builder(17, spec.name);
    spec.build(builder, 2);
    const auto& nodes = builder.model().graph().node();
    ASSERT_EQ(nodes.size(), 6) << spec.name;
    EXPECT_EQ(nodes[spec.work_node].op_type(), spec.timed_op) << spec.name;
    EXPECT_EQ(nodes[2].op_type(), "InstanceNormalization") << spec.name;
  }
}

// Pools are timed as CNNs pool (3x3 at stride 2) and Concats as SqueezeNet joins two images, in
// fans; on the CPU after 1x1 Convs and before GlobalAveragePools (its channels-last layout), their
// steps timed.
TEST(CalibrationSpecsTest, PoolsAreStridedAndConcatsJoinTwoImagesInFans) {
  for (DeviceApi api : {DeviceApi::kHost, DeviceApi::kOpenCl}) {
    const bool host = api == DeviceApi::kHost;
    std::vector<Spec> specs =
        specs_on(api, [](const Spec& spec) { return spec.cost_class == CostClass::kPooling; });
    EXPECT_EQ(specs.size(), 6u);
    std::vector<Spec> concats =
        specs_on(api, [](const Spec& spec) { return spec.cost_class == CostClass::kConcat; });
    EXPECT_EQ(concats.size(), 5u);
    for (Spec& spec : concats) specs.push_back(std::move(spec));
    for (const Spec& spec : specs) {
      const bool pool = spec.cost_class == CostClass::kPooling;
      const std::string op = pool ? "MaxPool" : "Concat";
      EXPECT_EQ(spec.timed_op, host ? op : "") << spec.name;
      OnnxBuilder builder(17, spec.name);
      spec.build(builder, 3);
      const auto& graph = builder.model().graph();
      EXPECT_EQ(graph.output_size(), 3) << spec.name;
      int measured = 0;
      for (const onnx::NodeProto& node : graph.node()) {
        if (node.op_type() != op) continue;
        if (measured++ == 0) {
          EXPECT_EQ(&node, &graph.node(spec.work_node)) << spec.name;
        }
        EXPECT_EQ(node.input_size(), pool ? 1 : 2) << spec.name;
        EXPECT_EQ(node.input(0), host ? "producer0" : "x") << spec.name;
        if (pool) {
          ASSERT_EQ(node.attribute(2).name(), "strides") << spec.name;
          EXPECT_EQ(node.attribute(2).ints(0), 2) << spec.name;
        }
      }
      EXPECT_EQ(measured, 3) << spec.name;
      // On the CPU: the producers, then each measured node read by a GlobalAveragePool.
      EXPECT_EQ(graph.node_size(), host ? (pool ? 1 : 2) + 2 * 3 : 3) << spec.name;
    }
  }
}

TEST(TargetYamlTest, CalibratedProfileRoundTrips) {
  DeviceProfile cpu;
  cpu.id = "cpu0";
  cpu.name = "Some CPU";
  cpu.kind = DeviceKind::kCpu;
  cpu.api = DeviceApi::kHost;
  cpu.locator = "host";
  cpu.calibration = "hsched calibrate, test";
  cpu.peak_gflops[Precision::kFp32] = 210;
  cpu.memory_bandwidth_gbps = 15;
  cpu.memory_bytes = int64_t{8} << 30;
  cpu.run_overhead_ms = 0.004;
  cpu.wake_overhead_ms = 0.08;
  cpu.team_wake_overhead_ms = 0.05;
  cpu.dispatch_overhead_ms = 0.03;
  cpu.stream_overhead_ms = 0.0045;
  cpu.ops = {"*"};
  cpu.curves[{CostClass::kConv, Precision::kFp32}] = {{"a", 1e6, 0.02, 0.05},
                                                      {"b+c", 2.5e8, 1.1, 0.1}};
  cpu.curves[{CostClass::kElementwise, Precision::kFp32}] = {{"d", 4096, 0.001, 0}};
  cpu.qdq_curves[CostClass::kGemm] = {{"e_int8_qdq", 2e6, 0.01, 0.03}};
  cpu.probe = {{"d", 4096, 0.0012, 0.02}, {"a", 1e6, 0.021, 0.04}};  // as measured, any order
  Target target{"calibrated-test", "", {cpu}};
  const auto path = std::filesystem::temp_directory_path() /
                    ("hsched-calibrated-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << target_yaml(target, "a header\nof two lines");
  auto loaded = load_target(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
  ASSERT_EQ(loaded->devices.size(), 1u);
  const DeviceProfile& back = loaded->devices[0];
  EXPECT_EQ(back.locator, "host");
  EXPECT_EQ(back.calibration, cpu.calibration);
  EXPECT_NEAR(back.run_overhead_ms, 0.004, 1e-9);
  EXPECT_NEAR(back.wake_overhead_ms, 0.08, 1e-9);
  EXPECT_NEAR(back.team_wake_overhead_ms, 0.05, 1e-9);
  EXPECT_NEAR(back.dispatch_overhead_ms, 0.03, 1e-9);
  EXPECT_NEAR(back.stream_overhead_ms, 0.0045, 1e-9);
  ASSERT_EQ(back.curves.size(), 2u);
  const Curve& conv = back.curves.at({CostClass::kConv, Precision::kFp32});
  ASSERT_EQ(conv.size(), 2u);
  EXPECT_EQ(conv[1].bench, "b+c");
  EXPECT_DOUBLE_EQ(conv[1].work, 2.5e8);
  EXPECT_DOUBLE_EQ(conv[1].ms, 1.1);
  EXPECT_DOUBLE_EQ(conv[1].spread, 0.1);
  ASSERT_EQ(back.qdq_curves.size(), 1u);
  ASSERT_EQ(back.qdq_curves.at(CostClass::kGemm).size(), 1u);
  EXPECT_EQ(back.qdq_curves.at(CostClass::kGemm)[0].bench, "e_int8_qdq");
  EXPECT_DOUBLE_EQ(back.qdq_curves.at(CostClass::kGemm)[0].ms, 0.01);
  ASSERT_EQ(back.probe.size(), 2u);
  EXPECT_EQ(back.probe[0].bench, "d");
  EXPECT_DOUBLE_EQ(back.probe[0].ms, 0.0012);
  EXPECT_EQ(back.probe[1].bench, "a");
  EXPECT_DOUBLE_EQ(back.probe[1].spread, 0.04);
}

TEST(TargetYamlTest, CurveOutOfOrderIsRefusedNamingTheKey) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("hsched-bad-curve-" + std::to_string(::getpid()) + ".yaml");
  const auto refusal = [&](const std::string& curves) {
    std::ofstream(path) << "schema_version: 1\nkind: target\nname: t\ndevices:\n"
                           "  - {id: cpu0, kind: cpu, peak_gflops: {fp32: 10}, "
                           "memory_bandwidth_gbps: 1, memory_gib: 1, ops: '*',\n     "
                        << curves << "}\n";
    auto loaded = load_target(path.string());
    std::filesystem::remove(path);
    return loaded.is_ok() ? std::string() : loaded.status().message();
  };
  const std::string order = "[{work: 10, ms: 1}, {work: 5, ms: 2}]";
  EXPECT_NE(refusal("curves: {conv: {fp32: " + order + "}}").find("devices[0].curves.conv.fp32"),
            std::string::npos);
  EXPECT_NE(refusal("qdq_curves: {gemm: " + order + "}").find("devices[0].qdq_curves.gemm"),
            std::string::npos);
  EXPECT_NE(refusal("qdq_curves: {gemmm: [{work: 1, ms: 1}]}").find("gemmm"), std::string::npos);
  // Bytes classes have no QDQ form.
  const std::string bytes = refusal("qdq_curves: {elementwise: [{work: 1, ms: 1}]}");
  EXPECT_NE(bytes.find("devices[0].qdq_curves.elementwise: unknown compute class"),
            std::string::npos)
      << bytes;
}

TEST(BindPresentTest, CalibratedDevicesRunWhereTheyWereMeasured) {
  DeviceProfile cpu;
  cpu.id = "cpu0";
  cpu.name = "Some CPU";
  cpu.api = DeviceApi::kHost;
  cpu.locator = "host";
  DeviceProfile gpu;
  gpu.id = "gpu0";
  gpu.name = "Some GPU";
  gpu.kind = DeviceKind::kGpu;
  gpu.api = DeviceApi::kOpenCl;
  gpu.locator = "opencl:1:0";
  DeviceProfile other = gpu;
  other.id = "gpu1";
  other.name = "Another GPU";  // same place, another device: not this one
  const Target profile{"calibrated", "calibration.yaml", {cpu, gpu, other}};
  Target found{"this-machine", "discovered", {cpu, gpu}};
  for (DeviceProfile& d : found.devices) d.present = true;
  found.devices[0].locator = "";  // discovery gives the host no locator
  const Target bound = bind_present(profile, found);
  EXPECT_TRUE(bound.devices[0].present);
  EXPECT_TRUE(bound.devices[1].present);
  EXPECT_FALSE(bound.devices[2].present);
}

// `hsched calibrate --check`: the probe's benchmarks timed again on this machine's CPU and set
// against the profile's times. One round of one small benchmark (and the overhead chains every
// calibration measures): well under a second.
class CheckDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const DeviceProfile& device : hsched::discover_target().devices) {
      if (device.api == DeviceApi::kHost) host_ = device;
    }
    for (const Spec& spec : specs_for(host_)) {
      if (spec.cost_class == CostClass::kElementwise) {
        bench_ = spec.name;
        break;
      }
    }
    options_.protocol.rounds = 1;
    calibrated_ = host_;
    calibrated_.calibration = "hsched calibrate, test, 2 CPU threads, 1 rounds";
  }

  DeviceProfile host_;
  DeviceProfile calibrated_;
  std::string bench_;
  CalibrateOptions options_;
};

TEST_F(CheckDeviceTest, TheProbeIsTimedAgainAgainstItsTimeThen) {
  ASSERT_FALSE(bench_.empty());
  // Then: a second a node, far slower than any node of an elementwise chain runs now.
  calibrated_.probe = {{bench_, 4096, 1000.0, 0}, {"no_such_bench", 1, 1.0, 0}};
  Result<SpeedCheck> check = check_device(host_, host_, calibrated_, options_);
  ASSERT_TRUE(check.is_ok()) << check.status().message();
  EXPECT_EQ(check->probes, 1);
  EXPECT_GT(check->ratio, 0);
  EXPECT_LT(check->ratio, 0.01);
  EXPECT_DOUBLE_EQ(check->lowest, check->ratio);
  EXPECT_DOUBLE_EQ(check->highest, check->ratio);
  ASSERT_EQ(check->lines.size(), 2u);
  EXPECT_EQ(check->lines[0].rfind(bench_, 0), 0u) << check->lines[0];
  EXPECT_NE(check->lines[1].find("not measured now"), std::string::npos) << check->lines[1];
}

TEST_F(CheckDeviceTest, AProfileWithoutAProbeOrOfOtherThreadsIsRefused) {
  Result<SpeedCheck> none = check_device(host_, host_, calibrated_, options_);
  ASSERT_FALSE(none.is_ok());
  EXPECT_NE(none.status().message().find("--fresh"), std::string::npos) << none.status().message();
  calibrated_.probe = {{bench_, 4096, 1.0, 0}};
  options_.cpu_threads = 1;
  Result<SpeedCheck> threads = check_device(host_, host_, calibrated_, options_);
  ASSERT_FALSE(threads.is_ok());
  EXPECT_NE(threads.status().message().find("--threads"), std::string::npos)
      << threads.status().message();
  options_.cpu_threads = 2;
  calibrated_.probe = {{"no_such_bench", 1, 1.0, 0}};
  Result<SpeedCheck> unknown = check_device(host_, host_, calibrated_, options_);
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_NE(unknown.status().message().find("none of"), std::string::npos)
      << unknown.status().message();
}

// Every device times its compute classes in int8 as a QDQ model runs them: each fp32 product
// and convolution without a profiled step has a quantized twin ("_int8_qdq"). On the CPU such a
// benchmark runs whole (its Q/DQ nodes fused into 8-bit steps) and gives a QDQ curve, apart from
// the int8 curves of its dynamic quantization.
TEST_F(CheckDeviceTest, EveryDeviceTimesItsProductsOnQdqGraphs) {
  for (DeviceApi api : {DeviceApi::kHost, DeviceApi::kOpenCl}) {
    std::set<std::string> fp32, qdq;
    for (const Spec& spec : specs_on(api, [](const Spec& spec) {
           return is_compute_class(spec.cost_class) && spec.timed_op.empty() && !spec.baseline;
         })) {
      if (!spec.quantized) {
        EXPECT_EQ(spec.precision, Precision::kFp32) << spec.name;
        fp32.insert(spec.name.substr(0, spec.name.size() - std::string("fp32").size()));
        continue;
      }
      EXPECT_EQ(spec.precision, Precision::kInt8) << spec.name;
      ASSERT_EQ(spec.name.substr(spec.name.size() - 9), "_int8_qdq") << spec.name;
      qdq.insert(spec.name.substr(0, spec.name.size() - std::string("int8_qdq").size()));
    }
    EXPECT_GT(qdq.size(), 50u);
    EXPECT_EQ(fp32, qdq);
  }
  std::string bench;
  for (const Spec& spec : specs_for(host_)) {
    if (spec.quantized && spec.cost_class == CostClass::kConv) bench = spec.name;
  }
  ASSERT_FALSE(bench.empty());
  options_.only = {bench};
  Result<CalibrationReport> report = calibrate_device(host_, host_, nullptr, options_);
  ASSERT_TRUE(report.is_ok()) << report.status().message();
  EXPECT_EQ(report->measured, 1) << bench;
  EXPECT_EQ(report->profile.curves.count({CostClass::kConv, Precision::kInt8}), 0u);
  const auto curve = report->profile.qdq_curves.find(CostClass::kConv);
  ASSERT_NE(curve, report->profile.qdq_curves.end());
  ASSERT_EQ(curve->second.size(), 1u);
  EXPECT_EQ(curve->second[0].bench, bench);
  EXPECT_GT(curve->second[0].ms, 0);
}

}  // namespace
}  // namespace hsched::calibration
