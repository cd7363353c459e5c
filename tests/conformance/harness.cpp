#include "conformance/harness.h"

#include <cmath>
#include <map>
#include <memory>
#include <sstream>

#include "core/float16.h"
#include "scheduler/config/discover.h"

namespace hsched::conformance {
namespace {

struct Devices {
  std::vector<std::unique_ptr<Device>> owned;
  std::map<Slot, std::vector<Device*>> by_slot;
};

std::optional<Slot> slot_of(const DeviceProfile& profile) {
  if (profile.kind == DeviceKind::kNpu) return Slot::kNpu;
  if (profile.api == DeviceApi::kHost) return Slot::kCpu;
  if (profile.api == DeviceApi::kOpenCl) return Slot::kOpenCl;
  return std::nullopt;  // a GPU seen through Level Zero runs through OpenCL
}

const Devices& devices() {
  static const Devices found = [] {
    Devices d;
    // A cache in the build tree: PoCL's and the NPU's builds are kept between runs.
    const DeviceContext context{HSCHED_CONFORMANCE_CACHE_DIR};
    for (const DeviceProfile& profile : discover_target().devices) {
      const std::optional<Slot> slot = slot_of(profile);
      if (!slot) continue;
      d.owned.push_back(config::backends().open(profile, context));
      d.by_slot[*slot].push_back(d.owned.back().get());
    }
    return d;
  }();
  return found;
}

// The values of a tensor of any dtype the table produces, as doubles.
std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> v;
  v.reserve(static_cast<size_t>(t.elements()));
  switch (t.dtype()) {
    case DType::kF32:
      for (float x : t.values<float>()) v.push_back(x);
      break;
    case DType::kF16:
      for (uint16_t x : t.values<uint16_t>()) v.push_back(half_to_float(x));
      break;
    case DType::kI64:
      for (int64_t x : t.values<int64_t>()) v.push_back(static_cast<double>(x));
      break;
    case DType::kI32:
      for (int32_t x : t.values<int32_t>()) v.push_back(x);
      break;
    case DType::kBool:
    case DType::kU8:
      for (uint8_t x : t.values<uint8_t>()) v.push_back(x);
      break;
    case DType::kI8:
      for (int8_t x : t.values<int8_t>()) v.push_back(x);
      break;
    default:
      break;
  }
  return v;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

// "" when `actual` matches `expected` within `tol`, else one line naming the worst element.
std::string compare(const std::vector<Tensor>& actual, const std::vector<Tensor>& expected,
                    Tolerance tol) {
  if (actual.size() != expected.size()) {
    return std::to_string(actual.size()) + " outputs, expected " + std::to_string(expected.size());
  }
  for (size_t o = 0; o < actual.size(); ++o) {
    const std::string name = "out" + std::to_string(o);
    if (actual[o].dims() != expected[o].dims() || actual[o].dtype() != expected[o].dtype()) {
      return name + " is " + std::string(dtype_name(actual[o].dtype())) +
             dims_text(actual[o].dims()) + ", expected " +
             std::string(dtype_name(expected[o].dtype())) + dims_text(expected[o].dims());
    }
    const std::vector<double> a = as_doubles(actual[o]);
    const std::vector<double> b = as_doubles(expected[o]);
    double worst = 0;
    size_t worst_at = 0;
    bool bad = false;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      const double diff = std::abs(a[i] - b[i]);
      const double excess =
          std::isnan(diff) ? INFINITY : diff - (tol.atol + tol.rtol * std::abs(b[i]));
      if (excess > 0 && (!bad || excess > worst)) {
        bad = true;
        worst = excess;
        worst_at = i;
      }
    }
    if (bad) {
      std::ostringstream s;
      s << name << "[" << worst_at << "] = " << a[worst_at] << ", expected " << b[worst_at]
        << " (tolerance " << tol.atol << " + " << tol.rtol << "|b|)";
      return s.str();
    }
  }
  return "";
}

std::string status_text(const Status& status) {
  return std::string(error_code_name(status.code())) + ": " + status.message();
}

}  // namespace

const char* slot_name(Slot slot) {
  switch (slot) {
    case Slot::kCpu:
      return "cpu";
    case Slot::kOpenCl:
      return "opencl";
    case Slot::kNpu:
      return "npu";
  }
  return "?";
}

void PrintTo(Slot slot, std::ostream* out) { *out << slot_name(slot); }

const std::vector<Device*>& slot_devices(Slot slot) {
  static const std::vector<Device*> none;
  const auto it = devices().by_slot.find(slot);
  return it == devices().by_slot.end() ? none : it->second;
}

Device* matrix_device(Slot slot) {
  for (Device* device : slot_devices(slot)) {
    if (slot != Slot::kOpenCl || device->profile().kind == DeviceKind::kCpu) return device;
  }
  return nullptr;
}

const std::vector<KnownGap>& known_gaps() {
  // None now. A case belongs here when a device's check() accepts a node its compile() refuses
  // (CpuDevice::check() answers from the kernel registry's op names alone; the attribute
  // refusals of the kernels' factories show only when compile() creates the kernel).
  static const std::vector<KnownGap> gaps;
  return gaps;
}

const KnownGap* find_known_gap(Slot slot, const std::string& case_name, Precision precision) {
  for (const KnownGap& gap : known_gaps()) {
    if (gap.slot == slot && case_name == gap.case_name && gap.precision == precision) return &gap;
  }
  return nullptr;
}

Tolerance tolerance_for(Slot slot, Precision precision) {
  if (slot == Slot::kNpu || precision != Precision::kFp32) return {5e-2, 5e-2};
  return {1e-4, 1e-4};
}

Result<std::vector<Tensor>> reference_outputs(const OpCase& op_case) {
  static std::map<std::string, Result<std::vector<Tensor>>> computed;
  const auto found = computed.find(op_case.name);
  if (found != computed.end()) return found->second;
  Result<std::vector<Tensor>> outputs = Status(ErrorCode::kUnavailable, "no host CPU device");
  if (Device* cpu = matrix_device(Slot::kCpu)) {
    auto program = cpu->compile(build_graph(op_case), CompileOptions{});
    outputs = program.is_ok() ? (*program)->run(make_inputs(op_case), nullptr)
                              : Result<std::vector<Tensor>>(program.status());
  }
  // Outputs may borrow the program's memory: keep deep copies.
  if (outputs.is_ok()) {
    for (Tensor& t : *outputs) t = t.clone();
  }
  computed.emplace(op_case.name, outputs);
  return outputs;
}

Outcome run_case(Device& device, Slot slot, const OpCase& op_case, Precision precision) {
  Outcome outcome;
  const Graph graph = build_graph(op_case);
  outcome.rejection = device.check(graph, NodeId{0}, precision);
  if (outcome.rejection) return outcome;
  const Result<std::vector<Tensor>> expected = reference_outputs(op_case);
  if (!expected.is_ok()) {
    outcome.failure = "CPU reference: " + status_text(expected.status());
    return outcome;
  }
  CompileOptions options;
  options.precision = precision;
  // Set, as the runtime does (deployment's compile_timeout_ms): CompileOptions' 0 is a 0 ms
  // deadline, not "none"; PoCL's first build of its kernels takes seconds on this machine.
  options.compile_timeout_ms = 600000;
  auto program = device.compile(graph, options);
  if (!program.is_ok()) {
    outcome.failure = "check() accepted it, compile() failed: " + status_text(program.status());
    return outcome;
  }
  auto outputs = (*program)->run(make_inputs(op_case), nullptr);
  if (!outputs.is_ok()) {
    outcome.failure = "compiled, run() failed: " + status_text(outputs.status());
    return outcome;
  }
  outcome.failure = compare(*outputs, *expected, tolerance_for(slot, precision));
  outcome.passed = outcome.failure.empty();
  if (!outcome.passed) outcome.failure = "ran, result differs: " + outcome.failure;
  return outcome;
}

}  // namespace hsched::conformance
