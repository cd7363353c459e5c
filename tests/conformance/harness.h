// What the conformance test and the support matrix share: the devices of this machine grouped in
// the three columns the table is run on (the host CPU, OpenCL devices, NPUs), running one case on
// one device in one precision against the CPU's fp32 result, and the list of known gaps (nodes a
// device's check() accepts that it cannot yet compile or run right), each with its reason.
// Devices are discovered and opened once per process; not thread-safe (gtest runs one test at a
// time).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "conformance/op_cases.h"

namespace hsched::conformance {

// A column of the table: which devices of discover_target() it runs on.
enum class Slot { kCpu, kOpenCl, kNpu };
inline constexpr Slot kSlots[] = {Slot::kCpu, Slot::kOpenCl, Slot::kNpu};
const char* slot_name(Slot slot);            // "cpu", "opencl", "npu"
void PrintTo(Slot slot, std::ostream* out);  // gtest prints a test's parameter by its name

// The devices of `slot` on this machine, opened through config::backends() with the test's
// program cache: the host CPU; every OpenCL device (PoCL here); every Level Zero NPU (the
// simulated one when ZE_ENABLE_ALT_DRIVERS names its driver). Empty when none is present.
const std::vector<Device*>& slot_devices(Slot slot);

// The device docs/ops.md describes for `slot`, or nullptr when this machine lacks it: the host
// CPU, the OpenCL device of type CPU (PoCL) and the first NPU.
Device* matrix_device(Slot slot);

// A node a device's check() accepts but whose program is known not to build or match yet.
struct KnownGap {
  Slot slot;
  const char* case_name;
  Precision precision;
  const char* reason;  // one line: what fails and why
};
const std::vector<KnownGap>& known_gaps();
const KnownGap* find_known_gap(Slot slot, const std::string& case_name, Precision precision);

// Tolerance of a device's result against the CPU's fp32 one: |a - b| <= atol + rtol |b|.
struct Tolerance {
  double atol = 1e-4;
  double rtol = 1e-4;
};
Tolerance tolerance_for(Slot slot, Precision precision);

// The CPU's fp32 outputs of the case (computed once per case), or the error that stopped them.
Result<std::vector<Tensor>> reference_outputs(const OpCase& op_case);

// What happened to one case on one device in one precision.
struct Outcome {
  std::optional<Rejection> rejection;  // check() said no (nothing else was tried)
  bool passed = false;                 // accepted, compiled, ran and matched
  std::string failure;                 // when accepted and not passed: the step and its error
};

// Asks `device` about the case; when accepted compiles it in `precision`, runs it on the seeded
// inputs and compares with reference_outputs().
Outcome run_case(Device& device, Slot slot, const OpCase& op_case, Precision precision);

}  // namespace hsched::conformance
