// The result of scheduling: where every node runs, in which precision and why; partitions in
// execution order; transfers between them; predicted times; every rejection as data.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hsched/device.h"
#include "hsched/ids.h"
#include "hsched/policy.h"

namespace hsched {

// Why a device cannot take a node (or a partition, for failures found late).
enum class ReasonCode {
  kOpUnsupported,
  kDtypeUnsupported,
  kAttributeUnsupported,  // detail names the attribute and its value
  kShapeUnsupported,
  kPrecisionNotAllowed,
  kDeviceAbsent,
  kCompileFailed,
  kCompileTimeout,
  kVerificationFailed,
  kMemoryExceeded,
  kDeviceLost,         // the device failed while running (lost, reset, or any other run-time error)
  kAccuracyBudget,     // the node in this precision erred past the policy's accuracy budget
  kDriverUnsupported,  // the device's driver, asked before the build, does not support it
  kDeviceLimit,        // the device holds no more graphs (an NPU driver's per-context limit)
};
const char* reason_code_name(ReasonCode code);  // "op_unsupported", ...

// A device's "no" to a node, kept as data: the report prints these records.
struct Rejection {
  NodeId node = kNoNode;
  std::string device;  // device id in the target ("gpu0")
  Precision precision = Precision::kFp32;
  ReasonCode reason = ReasonCode::kOpUnsupported;
  std::string detail;  // e.g. "attribute auto_pad=SAME_LOWER", "no kernel for op NonZero"
};

// Why a node is where it is.
enum class PlacementReason {
  kFirstChoice,  // the policy's first choice, supported
  kPolicy,       // the policy allows only this (e.g. non-conv/linear ops go to the CPU)
  kCost,         // an allowed device earlier in the list was predicted slower (detail: both ms)
  kFallback,     // every earlier choice rejected it (the rejections say why)
  kSubstituted,  // the device lacks the requested precision; the policy's substitute was used
};
const char* placement_reason_name(PlacementReason reason);

struct NodePlacement {
  NodeId node = kNoNode;
  std::string device;  // device id
  Precision precision = Precision::kFp32;
  int partition = -1;
  PlacementReason reason = PlacementReason::kFirstChoice;
  std::string detail;
  double predicted_ms = 0;  // compute + launch on its device
};

// A node that did not get its first choice because of rejections.
struct Fallback {
  NodeId node = kNoNode;
  Choice wanted;       // the policy's first choice
  std::string device;  // where it went
  Precision precision = Precision::kFp32;
  ReasonCode reason = ReasonCode::kOpUnsupported;  // of the first choice's rejection
  std::string detail;
};

// A stretch of the execution order on one device (its nodes need not be connected: independent
// nodes a device runs in turn share one partition); partitions are listed in execution order,
// each depends only on partitions before it, and the next one is on another device.
struct Partition {
  int id = 0;
  std::string device;
  std::vector<NodeId> nodes;  // in execution order
  double compute_ms = 0;      // sum of its nodes' predictions
  double compile_ms = 0;      // one-time compile cost (before amortisation)
  // One steady-state run of it: compute_ms, the device's run overhead, and the copies its device
  // makes (uploads of what it reads, downloads of what it writes; nothing on the host).
  double run_ms = 0;
};

// A value crossing devices: produced in `from_partition`, first read in `to_partition`. One
// transfer per (value, destination device).
struct Transfer {
  ValueId value = kNoValue;
  int from_partition = -1;
  int to_partition = -1;
  std::string from_device;
  std::string to_device;
  int64_t bytes = 0;
  double predicted_ms = 0;  // 0 plus sync latency when zero-copy
};

struct Plan {
  std::string model;  // graph name or file
  Target target;
  Policy policy;
  std::vector<NodePlacement> nodes;  // indexed by NodeId: every node exactly once
  std::vector<Partition> partitions;
  std::vector<Transfer> transfers;
  std::vector<Rejection> rejections;  // every "no" asked during planning
  std::vector<Fallback> fallbacks;

  // Predicted latency of one run: partitions' compute and transfers in execution order, plus
  // compile cost amortised over policy.expected_runs.
  double predicted_ms = 0;
  // One steady-state run, compile excluded: the partitions' run_ms. What a timed run measures.
  double predicted_run_ms = 0;
  // The best plan that keeps every node on one device (where that device supports them all),
  // per device id: what the partitioner must never do worse than.
  std::map<std::string, double> single_device_ms;
};

}  // namespace hsched
