// The individual rules a device's check() is made of. Each rule looks at one node and one precision
// and returns a Rejection (reason + detail naming what is at fault) or std::nullopt when the rule
// has no objection. Devices (profile_device.cpp and each backend's device) pick the rules
// that hold for their device; all rules are pure and cheap (no allocation on the success path
// beyond what the graph lookups need).
#pragma once

#include <optional>

#include "graph/graph.h"
#include "hsched/device.h"
#include "hsched/plan.h"
#include "hsched/status.h"

namespace hsched {

// Largest rank the device kernels of the GPU/NPU backends index (dims are passed in fixed arrays
// of 8, as in OpenCL kernel arguments and Level Zero graph descriptors).
inline constexpr size_t kMaxDeviceRank = 8;

// A rule: std::nullopt when it has no objection to running `node` on `device` in `precision`.
using CapabilityRule = std::optional<Rejection> (*)(const Graph& graph, NodeId node,
                                                    const DeviceProfile& device,
                                                    Precision precision);

// Ops of a non-default domain (com.microsoft...) are known to no backend: op_unsupported.
std::optional<Rejection> check_default_domain(const Graph& graph, NodeId node,
                                              const DeviceProfile& device, Precision precision);

// The op type is in the profile's op list ("*" = all): op_unsupported otherwise.
std::optional<Rejection> check_op_listed(const Graph& graph, NodeId node,
                                         const DeviceProfile& device, Precision precision);

// The precision is one the profile gives a peak for: precision_not_allowed otherwise.
std::optional<Rejection> check_precision_listed(const Graph& graph, NodeId node,
                                                const DeviceProfile& device, Precision precision);

// A reduced precision (fp16, bf16, int8) applies to float data: a node whose outputs are all
// integer or bool (shape and index computations) is refused with dtype_unsupported naming the
// dtype; a QuantizeLinear computes on float data and is accepted. fp32 accepts any dtype.
std::optional<Rejection> check_float_data(const Graph& graph, NodeId node,
                                          const DeviceProfile& device, Precision precision);

// Every input and output has a static shape of rank <= kMaxDeviceRank: shape_unsupported.
std::optional<Rejection> check_static_shapes(const Graph& graph, NodeId node,
                                             const DeviceProfile& device, Precision precision);

// Attribute values device compilers commonly refuse: Resize/Upsample modes other than
// nearest/linear, Conv/ConvTranspose auto_pad other than NOTSET, Pad modes other than constant
// on an NPU. attribute_unsupported with "attribute NAME=VALUE".
std::optional<Rejection> check_attributes(const Graph& graph, NodeId node,
                                          const DeviceProfile& device, Precision precision);

// The node's weights and activations (float tensors at the precision's element size) fit in the
// device's memory_bytes (0 = unknown: no check): memory_exceeded otherwise.
std::optional<Rejection> check_memory(const Graph& graph, NodeId node, const DeviceProfile& device,
                                      Precision precision);

// A whole partition (`part`, cut out of the model) against the device's memory_bytes (0 =
// unknown: no check): its weights, each counted once, plus the largest working set of one node
// (its non-constant inputs and outputs) at least must fit, or ResourceExhausted
// "memory_exceeded: ..." naming both sizes. A lower bound: the device's buffers come on top.
Status check_partition_memory(const Graph& part, const DeviceProfile& device,
                              Precision precision);

// Bytes of one element of `dtype` when computed in `precision`: float dtypes take the
// precision's size (fp16/bf16 2, int8 1, fp32 their own), others keep their size.
int64_t element_bytes(DType dtype, Precision precision);

// The profile's rules in a report's order (op domain, op listed, precision listed, float data,
// static shapes, attributes, memory): the first objection, or nullopt. What a device known from
// its profile alone answers, and where a backend's own rules start.
std::optional<Rejection> check_profile_rules(const Graph& graph, NodeId node,
                                             const DeviceProfile& device, Precision precision);

}  // namespace hsched
