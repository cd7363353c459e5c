// Device/policy names, the shipped configs, and the YAML loaders' refusals: every malformed
// file fails with InvalidArgument and one line naming the file and the key path.
#include "hsched/config.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/kernels/kernel.h"
#include "hsched/device.h"
#include "hsched/policy.h"
#include "support/temp_dir.h"

namespace hsched {
namespace {

namespace fs = std::filesystem;
using test::TempDir;
using test::write_file;

// Every field of a policy but its source, one per line, so that a difference reads as a diff.
std::string describe(const Policy& policy) {
  std::ostringstream out;
  const auto list = [&](const std::vector<Choice>& choices) {
    for (const Choice& choice : choices) out << " " << choice_name(choice);
    out << "\n";
  };
  out << "name " << policy.name << "\n";
  for (const auto& [op_class, choices] : policy.choices) {
    out << "class " << op_class_name(op_class) << ":";
    list(choices);
  }
  out << "default:";
  list(policy.default_choices);
  for (const auto& [op, choices] : policy.op_choices) {
    out << "op " << op << ":";
    list(choices);
  }
  for (const auto& [precision, substitutes] : policy.precision_substitutes) {
    out << "substitute " << precision_name(precision) << ":";
    for (Precision substitute : substitutes) out << " " << precision_name(substitute);
    out << "\n";
  }
  out << "fallback " << fallback_mode_name(policy.fallback) << "\nobjective "
      << objective_name(policy.objective) << "\n";
  for (const auto& [precision, tolerance] : policy.tolerances) {
    out << "tolerance " << precision_name(precision) << " " << tolerance.atol << " "
        << tolerance.rtol << "\n";
  }
  out << "expected_runs " << policy.expected_runs << "\n";
  out << "split_every " << policy.split_every << "\nverify " << policy.verify << "\n";
  return out.str();
}

std::vector<fs::path> shipped(const std::string& folder) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(configs_dir() / folder)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// ---------------------------------------------------------------------------------------------
// Names

TEST(DeviceNames, RoundTrip) {
  for (DeviceKind kind : {DeviceKind::kCpu, DeviceKind::kGpu, DeviceKind::kNpu}) {
    EXPECT_EQ(parse_device_kind(device_kind_name(kind)), kind);
  }
  for (DeviceApi api : {DeviceApi::kHost, DeviceApi::kOpenCl, DeviceApi::kLevelZero}) {
    EXPECT_EQ(parse_device_api(device_api_name(api)), api);
  }
  for (Precision p : {Precision::kFp32, Precision::kFp16, Precision::kBf16, Precision::kInt8}) {
    EXPECT_EQ(parse_precision(precision_name(p)), p);
  }
  for (int i = 0; i < kOpClassCount; ++i) {
    EXPECT_EQ(parse_op_class(op_class_name(OpClass(i))), OpClass(i));
  }
  EXPECT_STREQ(device_api_name(DeviceApi::kLevelZero), "level_zero");
  EXPECT_STREQ(op_class_name(OpClass::kConvLinear), "conv_linear");
  EXPECT_EQ(parse_precision("FP16"), std::nullopt);  // names are lower-case, exactly
  EXPECT_EQ(parse_device_kind(""), std::nullopt);
  EXPECT_EQ(choice_name({"gpu", Precision::kFp16}), "gpu/fp16");
  EXPECT_STREQ(fallback_mode_name(FallbackMode::kError), "error");
  EXPECT_STREQ(objective_name(Objective::kStrict), "strict");
}

TEST(OpClasses, KnownOps) {
  for (const char* op : {"Conv", "ConvTranspose", "Gemm", "MatMul"}) {
    EXPECT_EQ(op_class_of(op), OpClass::kConvLinear) << op;
  }
  EXPECT_EQ(op_class_of("GlobalAveragePool"), OpClass::kPooling);
  EXPECT_EQ(op_class_of("Softmax"), OpClass::kNormalization);
  EXPECT_EQ(op_class_of("LayerNormalization"), OpClass::kNormalization);
  EXPECT_EQ(op_class_of("Where"), OpClass::kElementwise);
  EXPECT_EQ(op_class_of("Cast"), OpClass::kElementwise);
  EXPECT_EQ(op_class_of("ReduceMean"), OpClass::kReduction);
  EXPECT_EQ(op_class_of("ArgMax"), OpClass::kReduction);
  EXPECT_EQ(op_class_of("Resize"), OpClass::kDataMovement);
  EXPECT_EQ(op_class_of("Reshape"), OpClass::kDataMovement);
  EXPECT_EQ(op_class_of("NonZero"), OpClass::kOther);
  EXPECT_EQ(op_class_of("conv"), OpClass::kOther);  // op types are case-sensitive
}

// Every op the CPU backend implements for models has a class; only the shape computations are
// "other".
TEST(OpClasses, CoverEveryCpuOp) {
  const std::set<std::string> shape_ops = {"Shape", "Size", "ConstantOfShape", "Range"};
  const std::vector<std::string> ops = cpu::make_cpu_kernel_registry().op_types();
  ASSERT_GT(ops.size(), 50u);
  for (const std::string& op : ops) {
    // Fused kernels of the CPU program ("hsched.GroupNorm") never appear in a planned graph.
    if (op.rfind("hsched.", 0) == 0) continue;
    EXPECT_EQ(op_class_of(op) == OpClass::kOther, shape_ops.count(op) != 0) << op;
  }
}

TEST(Devices, ProfileQueries) {
  DeviceProfile device;
  device.peak_gflops = {{Precision::kInt8, 1}, {Precision::kFp16, 1}, {Precision::kFp32, 1}};
  EXPECT_EQ(device.precisions(),
            (std::vector{Precision::kFp32, Precision::kFp16, Precision::kInt8}));
  device.ops = {"Conv", "Relu"};
  EXPECT_TRUE(device.supports_op("Conv"));
  EXPECT_FALSE(device.supports_op("Softmax"));
  device.ops = {"*"};
  EXPECT_TRUE(device.supports_op("Softmax"));
  device.ops.clear();
  EXPECT_FALSE(device.supports_op("Conv"));
}

TEST(Devices, MatchByKindApiOrId) {
  Target target;
  const auto add = [&](const char* id, DeviceKind kind, DeviceApi api) {
    DeviceProfile device;
    device.id = id;
    device.kind = kind;
    device.api = api;
    target.devices.push_back(device);
  };
  add("cpu0", DeviceKind::kCpu, DeviceApi::kHost);
  add("gpu0", DeviceKind::kGpu, DeviceApi::kOpenCl);
  add("npu0", DeviceKind::kNpu, DeviceApi::kLevelZero);
  add("gpu1", DeviceKind::kGpu, DeviceApi::kLevelZero);
  EXPECT_EQ(match_devices(target, "gpu"), (std::vector<std::string>{"gpu0", "gpu1"}));
  EXPECT_EQ(match_devices(target, "level_zero"), (std::vector<std::string>{"npu0", "gpu1"}));
  EXPECT_EQ(match_devices(target, "host"), (std::vector<std::string>{"cpu0"}));
  EXPECT_EQ(match_devices(target, "gpu1"), (std::vector<std::string>{"gpu1"}));
  EXPECT_TRUE(match_devices(target, "tpu").empty());
  ASSERT_NE(target.find("npu0"), nullptr);
  EXPECT_EQ(target.find("npu0")->kind, DeviceKind::kNpu);
  EXPECT_EQ(target.find("npu1"), nullptr);
}

TEST(Policies, DefaultPolicyAndChoicesFor) {
  Policy policy = default_policy();
  EXPECT_EQ(policy.source, "built-in");
  ASSERT_EQ(policy.choices_for("MatMul").size(), 3u);
  EXPECT_EQ(choice_name(policy.choices_for("MatMul")[0]), "gpu/fp16");
  EXPECT_EQ(choice_name(policy.choices_for("Conv")[1]), "npu/bf16");
  EXPECT_EQ(choice_name(policy.choices_for("Conv")[2]), "cpu/fp32");
  // Everything else on the CPU first; the cost model may move it to the GPU or NPU.
  for (const char* op : {"Relu", "Softmax", "MaxPool", "Reshape", "NonZero"}) {
    ASSERT_EQ(policy.choices_for(op).size(), 3u) << op;
    EXPECT_EQ(choice_name(policy.choices_for(op)[0]), "cpu/fp32") << op;
    EXPECT_EQ(choice_name(policy.choices_for(op)[1]), "gpu/fp16") << op;
    EXPECT_EQ(choice_name(policy.choices_for(op)[2]), "npu/fp16") << op;
  }
  EXPECT_EQ(policy.precision_substitutes.at(Precision::kBf16),
            std::vector<Precision>{Precision::kFp16});
  EXPECT_EQ(policy.fallback, FallbackMode::kWarn);
  EXPECT_EQ(policy.objective, Objective::kLatency);
  // The literal rule: the same first choices, nothing else, no cost model.
  auto strict = resolve_policy("strict");
  ASSERT_TRUE(strict.is_ok()) << strict.status().message();
  EXPECT_EQ(strict->objective, Objective::kStrict);
  EXPECT_EQ(strict->choices_for("Conv").size(), 3u);
  ASSERT_EQ(strict->choices_for("Relu").size(), 1u);
  EXPECT_EQ(choice_name(strict->choices_for("Relu")[0]), "cpu/fp32");
  EXPECT_EQ(policy.tolerances.at(Precision::kFp32).atol, 1e-4);
  EXPECT_EQ(policy.tolerances.at(Precision::kFp32).rtol, 1e-3);
  EXPECT_GT(policy.tolerances.at(Precision::kFp16).rtol, policy.tolerances[Precision::kFp32].rtol);
  EXPECT_GE(policy.tolerances.at(Precision::kBf16).rtol, policy.tolerances[Precision::kFp16].rtol);
  EXPECT_GT(policy.tolerances.at(Precision::kInt8).rtol, policy.tolerances[Precision::kBf16].rtol);

  // An op override comes before the op's class, which comes before `default`.
  policy.op_choices["Softmax"] = {{"npu", Precision::kFp16}};
  policy.choices[OpClass::kNormalization] = {{"gpu", Precision::kFp16}};
  EXPECT_EQ(choice_name(policy.choices_for("Softmax")[0]), "npu/fp16");
  EXPECT_EQ(choice_name(policy.choices_for("LayerNormalization")[0]), "gpu/fp16");
}

// ---------------------------------------------------------------------------------------------
// Shipped configs

TEST(ShippedConfigs, EveryFileLoads) {
  const auto targets = shipped("targets");
  const auto policies = shipped("policies");
  const auto deployments = shipped("deploy");
  EXPECT_GE(targets.size(), 3u);
  EXPECT_GE(policies.size(), 6u);
  EXPECT_GE(deployments.size(), 3u);
  for (const auto& file : targets) {
    Result<Target> target = load_target(file.string());
    ASSERT_TRUE(target.is_ok()) << target.status().message();
    EXPECT_EQ(target->name, file.stem().string());
    EXPECT_EQ(target->source, "configs/targets/" + file.filename().string());
    const DeviceProfile* cpu = target->find("cpu0");
    ASSERT_NE(cpu, nullptr) << file;
    EXPECT_EQ(cpu->ops, std::vector<std::string>{"*"});
    EXPECT_TRUE(cpu->peak_gflops.count(Precision::kFp32));
  }
  for (const auto& file : policies) {
    Result<Policy> policy = load_policy(file.string());
    ASSERT_TRUE(policy.is_ok()) << policy.status().message();
    EXPECT_EQ(policy->name, file.stem().string());
  }
  for (const auto& file : deployments) {
    Result<Deployment> deployment = load_deployment(file.string());
    ASSERT_TRUE(deployment.is_ok()) << deployment.status().message();
    EXPECT_EQ(deployment->target.name, file.stem().string());
    EXPECT_TRUE(fs::path(deployment->cache_dir).is_absolute()) << deployment->cache_dir;
  }
}

TEST(ShippedConfigs, DefaultYamlIsTheBuiltInDefault) {
  Result<Policy> loaded = resolve_policy("default");
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
  EXPECT_EQ(loaded->source, "configs/policies/default.yaml");
  EXPECT_EQ(describe(*loaded), describe(default_policy()));
}

TEST(ShippedConfigs, MeteorLakeFigures) {
  Result<Target> target = resolve_target("core-ultra-7-155h");
  ASSERT_TRUE(target.is_ok()) << target.status().message();
  ASSERT_EQ(target->devices.size(), 3u);
  const DeviceProfile& gpu = *target->find("gpu0");
  EXPECT_EQ(gpu.kind, DeviceKind::kGpu);
  EXPECT_EQ(gpu.api, DeviceApi::kOpenCl);
  EXPECT_FALSE(gpu.present);
  EXPECT_TRUE(gpu.zero_copy);
  EXPECT_DOUBLE_EQ(gpu.peak_gflops.at(Precision::kFp16), 2 * gpu.peak_gflops.at(Precision::kFp32));
  EXPECT_DOUBLE_EQ(gpu.launch_overhead_ms, 0.008);  // launch_overhead_us: 8
  EXPECT_EQ(gpu.memory_bytes, int64_t{16} << 30);
  EXPECT_TRUE(gpu.supports_op("MatMul"));
  EXPECT_FALSE(gpu.supports_op("Shape"));
  const DeviceProfile& npu = *target->find("npu0");
  EXPECT_EQ(npu.api, DeviceApi::kLevelZero);
  EXPECT_EQ(npu.precisions(), (std::vector{Precision::kFp16, Precision::kInt8}));  // no bf16
  EXPECT_TRUE(npu.supports_op("Conv"));
  EXPECT_FALSE(npu.supports_op("Gather"));

  Result<Target> a770 = resolve_target("arc-a770-desktop");
  ASSERT_TRUE(a770.is_ok()) << a770.status().message();
  EXPECT_FALSE(a770->find("gpu0")->zero_copy);
  EXPECT_DOUBLE_EQ(a770->find("gpu0")->transfer_bandwidth_gbps, 25);
  EXPECT_DOUBLE_EQ(a770->find("gpu0")->transfer_latency_ms, 0.01);
}

TEST(ShippedConfigs, DeploymentResolvesTargetPolicyAndCacheDir) {
  const char* old_home = std::getenv("HOME");
  const std::string saved = old_home ? old_home : "";
  ::setenv("HOME", "/home/tester", 1);
  Result<Deployment> deployment =
      load_deployment((configs_dir() / "deploy/core-ultra-7-155h.yaml").string());
  if (old_home) ::setenv("HOME", saved.c_str(), 1);
  ASSERT_TRUE(deployment.is_ok()) << deployment.status().message();
  EXPECT_EQ(deployment->name, "core-ultra-7-155h");
  EXPECT_EQ(deployment->source, "configs/deploy/core-ultra-7-155h.yaml");
  EXPECT_EQ(deployment->target.source, "configs/targets/core-ultra-7-155h.yaml");
  EXPECT_EQ(deployment->policy.name, "default");
  EXPECT_EQ(deployment->cache_dir, "/home/tester/.cache/hsched/core-ultra-7-155h");
  EXPECT_DOUBLE_EQ(deployment->compile_timeout_ms, 30000);
  EXPECT_EQ(deployment->expected_runs, default_policy().expected_runs);
}

TEST(Resolve, NamesPathsAndThisMachine) {
  Result<Target> unknown = resolve_target("no-such-laptop");
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_EQ(unknown.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("unknown target 'no-such-laptop'"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("core-ultra-7-155h"), std::string::npos);  // listed

  Result<Policy> by_path = resolve_policy((configs_dir() / "policies/cpu-only.yaml").string());
  ASSERT_TRUE(by_path.is_ok()) << by_path.status().message();
  EXPECT_EQ(by_path->fallback, FallbackMode::kError);

  Result<Target> no_discovery = resolve_target("this-machine");
  ASSERT_FALSE(no_discovery.is_ok());
  EXPECT_NE(no_discovery.status().message().find("this-machine"), std::string::npos);
  Result<Target> discovered = resolve_target("this-machine", [] {
    Target target;
    target.name = "this-machine";
    target.source = "discovered";
    return target;
  });
  ASSERT_TRUE(discovered.is_ok());
  EXPECT_EQ(discovered->source, "discovered");
}

// ---------------------------------------------------------------------------------------------
// Files of our own

constexpr const char* kTarget = R"(schema_version: 1
kind: target
name: tiny
devices:
  - id: cpu0
    kind: cpu
    peak_gflops: {fp32: 100}
    memory_bandwidth_gbps: 50
    zero_copy: true
    memory_gib: 8
    ops: "*"
  - id: gpu0
    kind: gpu
    peak_gflops: {fp32: 1000, fp16: 2000}
    efficiency: {conv_linear: 0.5}
    memory_bandwidth_gbps: 200
    launch_overhead_us: 5
    transfer_bandwidth_gbps: 16
    transfer_latency_us: 10
    memory_gib: 4
    ops: [Conv, Relu]
)";

constexpr const char* kPolicy = R"(schema_version: 1
kind: policy
name: mine
choices:
  conv_linear:
    - {device: gpu, precision: fp16}
default:
  - {device: cpu, precision: fp32}
ops:
  Softmax: [{device: gpu, precision: fp32}]
tolerances:
  fp16: {atol: 0.5, rtol: 0.25}
expected_runs: 7
)";

constexpr const char* kDeployment = R"(schema_version: 1
kind: deployment
target: targets/tiny.yaml
policy: mine.yaml
cache_dir: cache
compile_timeout_ms: 1500
expected_runs: 42
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "test bug: '" << from << "' not in the base file";
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

class ConfigFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ / "targets");
    write_file(dir_ / "targets/tiny.yaml", kTarget);
    write_file(dir_ / "mine.yaml", kPolicy);
    write_file(dir_ / "deploy.yaml", kDeployment);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes `text` as `name`, loads it with `load`, and expects InvalidArgument with a one-line
  // message that starts with the file's path and contains `expected`.
  template <typename Load>
  void expect_refused(const std::string& name, const std::string& text, Load load,
                      const std::string& expected) {
    write_file(dir_ / name, text);
    auto result = load(path(name));
    ASSERT_FALSE(result.is_ok()) << "accepted: " << text;
    const std::string& message = result.status().message();
    EXPECT_EQ(result.status().code(), ErrorCode::kInvalidArgument) << message;
    EXPECT_EQ(message.rfind(path(name), 0), 0u) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  void expect_target_refused(const std::string& text, const std::string& expected) {
    expect_refused("t.yaml", text, load_target, expected);
  }
  void expect_policy_refused(const std::string& text, const std::string& expected) {
    expect_refused("p.yaml", text, load_policy, expected);
  }
  void expect_deployment_refused(const std::string& text, const std::string& expected) {
    expect_refused(
        "d.yaml", text, [](const std::string& p) { return load_deployment(p); }, expected);
  }

  TempDir dir_;
};

TEST_F(ConfigFiles, OwnFilesLoad) {
  Result<Target> target = load_target(path("targets/tiny.yaml"));
  ASSERT_TRUE(target.is_ok()) << target.status().message();
  const DeviceProfile& gpu = target->devices[1];
  EXPECT_EQ(gpu.name, "gpu0");             // name defaults to the id
  EXPECT_EQ(gpu.api, DeviceApi::kOpenCl);  // api defaults by kind
  EXPECT_DOUBLE_EQ(gpu.efficiency.at(OpClass::kConvLinear), 0.5);
  EXPECT_DOUBLE_EQ(gpu.default_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(gpu.launch_overhead_ms, 0.005);
  EXPECT_DOUBLE_EQ(gpu.transfer_latency_ms, 0.01);
  EXPECT_EQ(gpu.memory_bytes, int64_t{4} << 30);
  EXPECT_EQ(gpu.ops, (std::vector<std::string>{"Conv", "Relu"}));

  Result<Policy> policy = load_policy(path("mine.yaml"));
  ASSERT_TRUE(policy.is_ok()) << policy.status().message();
  EXPECT_EQ(choice_name(policy->choices_for("Softmax")[0]), "gpu/fp32");
  EXPECT_EQ(choice_name(policy->choices_for("Gemm")[0]), "gpu/fp16");
  EXPECT_EQ(policy->fallback, FallbackMode::kWarn);  // defaults
  EXPECT_EQ(policy->objective, Objective::kLatency);
  EXPECT_EQ(policy->tolerances.at(Precision::kFp16).atol, 0.5);
  // Precisions the file leaves out keep the built-in tolerances.
  EXPECT_EQ(policy->tolerances.at(Precision::kFp32).rtol,
            default_policy().tolerances.at(Precision::kFp32).rtol);

  Result<Deployment> deployment = load_deployment(path("deploy.yaml"));
  ASSERT_TRUE(deployment.is_ok()) << deployment.status().message();
  EXPECT_EQ(deployment->name, "deploy");  // the file's stem
  EXPECT_EQ(deployment->target.name, "tiny");
  EXPECT_EQ(deployment->policy.name, "mine");
  EXPECT_EQ(deployment->cache_dir,
            (fs::absolute(dir_.path()) / "cache").lexically_normal().string());
  EXPECT_DOUBLE_EQ(deployment->compile_timeout_ms, 1500);
  EXPECT_EQ(deployment->expected_runs, 42);         // overrides the policy's 7...
  EXPECT_EQ(deployment->policy.expected_runs, 42);  // ...in the policy too
}

TEST_F(ConfigFiles, WrongTypes) {
  expect_target_refused(
      replaced(kTarget, "memory_bandwidth_gbps: 200", "memory_bandwidth_gbps: fast"),
      ": devices[1].memory_bandwidth_gbps: expected a number, got 'fast'");
  expect_target_refused(replaced(kTarget, "zero_copy: true", "zero_copy: [1]"),
                        ": devices[0].zero_copy: expected true or false, got a list");
  expect_target_refused(replaced(kTarget, "ops: [Conv, Relu]", "ops: all"),
                        ": devices[1].ops: expected a list of op types or '*', got 'all'");
  expect_target_refused(replaced(kTarget, "ops: [Conv, Relu]", "ops: {Conv: 1}"),
                        ": devices[1].ops: expected a list, got a mapping");
  expect_target_refused("schema_version: 1\nkind: target\nname: t\ndevices: 3\n",
                        ": devices: expected a list, got '3'");
  expect_policy_refused(replaced(kPolicy, "expected_runs: 7", "expected_runs: 2.5"),
                        ": expected_runs: expected a whole number, got '2.5'");
  expect_policy_refused(replaced(kPolicy, "[{device: gpu, precision: fp32}]", "gpu/fp32"),
                        ": ops.Softmax: expected a list, got 'gpu/fp32'");
  expect_target_refused("[1, 2]\n", ": expected a mapping, got a list");
}

TEST_F(ConfigFiles, UnknownKeysAtAnyDepth) {
  expect_target_refused(replaced(kTarget, "peak_gflops: {fp32: 1000,", "peak_gflops: {fp17: 1000,"),
                        ": devices[1].peak_gflops.fp17: unknown precision (expected fp32, fp16");
  expect_target_refused(replaced(kTarget, "launch_overhead_us: 5", "bandwith_gbps: 5"),
                        ": devices[1].bandwith_gbps: unknown key (expected one of: id, name");
  expect_target_refused(replaced(kTarget, "{conv_linear: 0.5}", "{convolution: 0.5}"),
                        ": devices[1].efficiency.convolution: unknown op class");
  expect_target_refused(replaced(kTarget, "name: tiny", "name: tiny\nversion: 3"),
                        ": version: unknown key");
  expect_policy_refused(
      replaced(kPolicy, "fp16: {atol: 0.5, rtol: 0.25}", "fp16: {atol: 0.5, rtol: 0.25, ulp: 1}"),
      ": tolerances.fp16.ulp: unknown key (expected one of: atol, rtol)");
  expect_policy_refused(replaced(kPolicy, "- {device: gpu, precision: fp16}",
                                 "- {device: gpu, precision: fp16, weight: 2}"),
                        ": choices.conv_linear[0].weight: unknown key");
}

TEST_F(ConfigFiles, BadValues) {
  expect_target_refused(replaced(kTarget, "memory_bandwidth_gbps: 50", "memory_bandwidth_gbps: -5"),
                        ": devices[0].memory_bandwidth_gbps: -5 must be in (0, 100000]");
  expect_target_refused(replaced(kTarget, "{conv_linear: 0.5}", "{conv_linear: 1.5}"),
                        ": devices[1].efficiency.conv_linear: 1.5 must be in (0, 1]");
  expect_target_refused(replaced(kTarget, "{conv_linear: 0.5}", "{conv_linear: 0}"),
                        ": devices[1].efficiency.conv_linear: 0 must be in (0, 1]");
  expect_target_refused(replaced(kTarget, "{fp32: 100}", "{fp32: .nan}"),
                        ": devices[0].peak_gflops.fp32: nan must be in");
  expect_target_refused(replaced(kTarget, "{fp32: 100}", "{fp32: .inf}"),
                        ": devices[0].peak_gflops.fp32: inf must be in");
  expect_target_refused(replaced(kTarget, "{fp32: 100}", "{}"), ": devices[0].peak_gflops: empty");
  expect_target_refused(replaced(kTarget, "kind: gpu", "kind: tpu"),
                        ": devices[1].kind: unknown device kind 'tpu' (expected cpu, gpu, npu)");
  expect_target_refused(replaced(kTarget, "id: gpu0", "id: cpu0"),
                        ": devices[1].id: duplicate device id 'cpu0'");
  expect_target_refused(replaced(kTarget, "id: gpu0", "id: 'gpu 0'"),
                        ": devices[1].id: 'gpu 0' is not a name");
  expect_target_refused(replaced(kTarget, "    transfer_bandwidth_gbps: 16\n", ""),
                        ": devices[1]: transfer_bandwidth_gbps is required (> 0)");
  expect_target_refused(replaced(kTarget, "kind: cpu", "kind: npu"), ": devices: no cpu device");
  expect_target_refused(replaced(kTarget, "ops: [Conv, Relu]", "ops: [Conv, Conv]"),
                        ": devices[1].ops[1]: duplicate op 'Conv'");
  expect_target_refused(
      replaced(kTarget, "    zero_copy: true\n", "    zero_copy: true\n    zero_copy: false\n"),
      ": devices[0].zero_copy: duplicate key");
  expect_policy_refused(replaced(kPolicy, "precision: fp16}", "precision: fp17}"),
                        ": choices.conv_linear[0].precision: unknown precision 'fp17'");
  expect_policy_refused(replaced(kPolicy, "expected_runs: 7", "objective: fastest"),
                        ": objective: unknown objective 'fastest' (expected latency, strict)");
  expect_policy_refused(
      replaced(kPolicy, "expected_runs: 7", "precision_substitutes: {bf16: [bf16]}"),
      ": precision_substitutes.bf16: lists bf16 itself");
  expect_policy_refused(replaced(kPolicy, "expected_runs: 7", "expected_runs: 0"),
                        ": expected_runs: 0 must be in [1, 1e+09]");
  expect_policy_refused(replaced(kPolicy, "  - {device: cpu, precision: fp32}\n", "  []\n"),
                        ": default: ");
}

// The forced split and verification: policy keys, which a deployment file may override.
TEST_F(ConfigFiles, SplitEveryAndVerify) {
  Result<Policy> plain = load_policy(path("mine.yaml"));
  ASSERT_TRUE(plain.is_ok()) << plain.status().message();
  EXPECT_EQ(plain->split_every, 0);  // off unless given
  EXPECT_FALSE(plain->verify);
  write_file(dir_ / "mine.yaml", replaced(kPolicy, "expected_runs: 7",
                                          "expected_runs: 7\nsplit_every: 3\nverify: true"));
  Result<Policy> policy = load_policy(path("mine.yaml"));
  ASSERT_TRUE(policy.is_ok()) << policy.status().message();
  EXPECT_EQ(policy->split_every, 3);
  EXPECT_TRUE(policy->verify);
  Result<Deployment> kept = load_deployment(path("deploy.yaml"));
  ASSERT_TRUE(kept.is_ok()) << kept.status().message();
  EXPECT_EQ(kept->policy.split_every, 3);  // the policy's, when the deployment says nothing
  EXPECT_TRUE(kept->policy.verify);
  write_file(dir_ / "deploy.yaml",
             replaced(kDeployment, "expected_runs: 42", "split_every: 1000000\nverify: false"));
  Result<Deployment> deployment = load_deployment(path("deploy.yaml"));
  ASSERT_TRUE(deployment.is_ok()) << deployment.status().message();
  EXPECT_EQ(deployment->policy.split_every, 1000000);
  EXPECT_FALSE(deployment->policy.verify);

  expect_policy_refused(replaced(kPolicy, "expected_runs: 7", "split_every: -1"),
                        ": split_every: -1 must be in [0, 1e+06]");
  expect_policy_refused(replaced(kPolicy, "expected_runs: 7", "split_every: 2000000"),
                        ": split_every: 2e+06 must be in [0, 1e+06]");
  expect_policy_refused(replaced(kPolicy, "expected_runs: 7", "split_every: 2.5"),
                        ": split_every: expected a whole number, got '2.5'");
  expect_policy_refused(replaced(kPolicy, "expected_runs: 7", "verify: maybe"),
                        ": verify: expected true or false, got 'maybe'");
  expect_deployment_refused(replaced(kDeployment, "expected_runs: 42", "split_every: many"),
                            ": split_every: expected a number, got 'many'");
  expect_deployment_refused(replaced(kDeployment, "expected_runs: 42", "verify: [1]"),
                            ": verify: expected true or false, got a list");
}

TEST_F(ConfigFiles, AccuracyBudget) {
  Result<Policy> plain = load_policy(path("mine.yaml"));
  ASSERT_TRUE(plain.is_ok()) << plain.status().message();
  EXPECT_FALSE(plain->accuracy);
  write_file(dir_ / "mine.yaml", replaced(kPolicy, "expected_runs: 7",
                                          "accuracy: {metric: cosine, bf16: 0.999, fp16: 0.99}"));
  Result<Policy> policy = load_policy(path("mine.yaml"));
  ASSERT_TRUE(policy.is_ok()) << policy.status().message();
  ASSERT_TRUE(policy->accuracy);
  EXPECT_EQ(policy->accuracy->metric, AccuracyMetric::kCosine);
  EXPECT_EQ(policy->accuracy->limits,
            (std::map<Precision, double>{{Precision::kFp16, 0.99}, {Precision::kBf16, 0.999}}));

  const auto with = [](const std::string& accuracy) {
    return replaced(kPolicy, "expected_runs: 7", "accuracy: " + accuracy);
  };
  expect_policy_refused(with("{bf16: 0.01}"), ": accuracy: missing required key 'metric'");
  expect_policy_refused(with("{metric: l2, bf16: 0.01}"), ": accuracy.metric: unknown metric 'l2'");
  expect_policy_refused(with("{metric: max_rel}"), ": accuracy: gives no precision a budget");
  expect_policy_refused(with("{metric: cosine, fp16: 1.5}"), ": accuracy.fp16: 1.5 must be in");
  expect_policy_refused(with("{metric: max_rel, fp32: 0.1}"), "fp32");
  expect_policy_refused(with("{metric: max_rel, int8: -1}"), ": accuracy.int8: -1 must be in");
}

TEST_F(ConfigFiles, MissingKeysVersionsAndKinds) {
  expect_target_refused(replaced(kTarget, "schema_version: 1\n", ""),
                        ": missing required key 'schema_version'");
  expect_target_refused(replaced(kTarget, "schema_version: 1", "schema_version: 2"),
                        ": schema_version: unsupported version 2 (this hsched reads 1)");
  expect_target_refused(replaced(kTarget, "    kind: cpu\n", ""),
                        ": devices[0]: missing required key 'kind'");
  expect_target_refused(replaced(kTarget, "kind: target", "kind: policy"),
                        ": kind: this file is a policy, expected a target");
  expect_policy_refused(kTarget, ": kind: this file is a target, expected a policy");
  expect_deployment_refused(kPolicy, ": kind: this file is a policy, expected a deployment");
  expect_policy_refused(replaced(kPolicy, "kind: policy", "kind: recipe"),
                        ": kind: unknown kind 'recipe'");
  expect_policy_refused(replaced(kPolicy, "default:\n  - {device: cpu, precision: fp32}\n", ""),
                        ": missing required key 'default'");
  Result<Target> missing = load_target(path("none.yaml"));
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(missing.status().message(), path("none.yaml") + ": file not found");
}

TEST_F(ConfigFiles, DeploymentReferences) {
  // The referenced file is named, after the key that names it.
  expect_deployment_refused(replaced(kDeployment, "targets/tiny.yaml", "targets/gone.yaml"),
                            ": target: file not found: " + path("targets/gone.yaml"));
  expect_deployment_refused(replaced(kDeployment, "policy: mine.yaml", "policy: no-such-policy"),
                            ": policy: unknown policy 'no-such-policy'");
  expect_deployment_refused(replaced(kDeployment, "targets/tiny.yaml", "this-machine"),
                            ": target: target 'this-machine' is built by device discovery");
  expect_deployment_refused(replaced(kDeployment, "cache_dir: cache", "cache_dir: ~bob/cache"),
                            ": cache_dir: '~user' paths are not supported");
  expect_deployment_refused(
      replaced(kDeployment, "compile_timeout_ms: 1500", "compile_timeout_ms: -1"),
      ": compile_timeout_ms: -1 must be in (0,");
  expect_deployment_refused(replaced(kDeployment, "cache_dir: cache\n", ""),
                            ": missing required key 'cache_dir'");
  // An error inside the referenced file keeps its file and key path.
  write_file(dir_ / "targets/bad.yaml", replaced(kTarget, "{fp32: 100}", "{fp17: 100}"));
  expect_deployment_refused(
      replaced(kDeployment, "targets/tiny.yaml", "targets/bad.yaml"),
      ": target: " + path("targets/bad.yaml") + ": devices[0].peak_gflops.fp17: unknown precision");
}

TEST_F(ConfigFiles, SyntaxErrorsAndEmptyFiles) {
  expect_target_refused("schema_version: 1\nkind: [target\n", ":3:1: YAML syntax error");
  expect_target_refused("schema_version: 1\n  kind: target\n", ":2:7: YAML syntax error");
  expect_target_refused("", ": empty file");
  expect_target_refused("# only a comment\n", ": empty file");
  expect_target_refused("schema_version: 1\n---\nschema_version: 1\n",
                        ": more than one YAML document");
  expect_target_refused("---\n---\n", ": more than one YAML document");
  // A token that starts no node: yaml-cpp 0.7's LoadAll loops for ever on it (found by the
  // config fuzzer).
  expect_target_refused(",", ":1:1: YAML syntax error: unexpected token");
  expect_target_refused("# a comment\n  , x\n", ":2:3: YAML syntax error: unexpected token");
  expect_target_refused("just text", ": expected a mapping, got 'just text'");
  expect_target_refused("? [a, b]\n: 1\n", ": a key is a list, expected plain text");
  fs::create_directories(dir_ / "folder.yaml");
  Result<Target> folder = load_target(path("folder.yaml"));
  ASSERT_FALSE(folder.is_ok());
  EXPECT_NE(folder.status().message().find("not a file"), std::string::npos);
}

// A FIFO named as a config file is refused at once: opening it for reading would block until a
// writer came.
TEST_F(ConfigFiles, FifoIsRefusedWithoutBlocking) {
  const fs::path fifo = dir_ / "fifo.yaml";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Result<Target> target = load_target(path("fifo.yaml"));
  ASSERT_FALSE(target.is_ok());
  EXPECT_EQ(target.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(target.status().message().find("not a file"), std::string::npos)
      << target.status().message();
}

// Whatever the bytes, the loaders answer (a value or InvalidArgument) and never throw or crash.
TEST_F(ConfigFiles, NeverCrash) {
  const std::vector<std::string> documents = {
      std::string(100000, '[') + std::string(100000, ']'),
      std::string(100000, '{'),
      "a: &x [*x]\n",
      "schema_version: !!binary AAAA\nkind: target\n",
      std::string("\0\xff\xfe\x01", 4),
      "schema_version: 1e999\n",
      "schema_version: 1\nkind: target\nname: t\ndevices: [~, {}, []]\n",
      "schema_version: 1\nkind: target\nname: t\ndevices: [{id: c, kind: cpu, peak_gflops: "
      "{fp32: 1}, memory_bandwidth_gbps: 1, memory_gib: 1e300, ops: '*'}]\n",
      "schema_version: 1\nkind: deployment\ntarget: \"\"\npolicy: ''\ncache_dir: x\n",
      "schema_version: 1\nkind: policy\nname: x\ndefault: [{device: ~, precision: ~}]\n",
  };
  for (const std::string& text : documents) {
    write_file(dir_ / "any.yaml", text);
    for (auto status :
         {load_target(path("any.yaml")).status(), load_policy(path("any.yaml")).status(),
          load_deployment(path("any.yaml")).status()}) {
      EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument) << text.substr(0, 80);
      EXPECT_EQ(status.message().find('\n'), std::string::npos) << status.message();
    }
  }
}

}  // namespace
}  // namespace hsched
