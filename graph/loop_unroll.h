// ONNX `Loop` of a trip count known at load time that runs every trip (exporters' `for i in
// range(n)`) and `Scan` over inputs of a length known at load time: unrolled into the main graph.
// hsched runs no control flow at run time, so a Loop whose trip count never folds, or whose
// condition may end it early, and a Scan over inputs of unknown length are refused at import.
#pragma once

#include <cstdint>

#include "graph/tensor_proto.h"
#include "hsched/status.h"

namespace onnx {
class GraphProto;
class NodeProto;
}  // namespace onnx

namespace hsched {

// The most trips a Loop is unrolled for, and the most bytes of body (nodes and their attributes,
// Constant values included; the body's initializers are shared by every trip) all trips copy.
inline constexpr int64_t kMaxUnrolledTrips = 4096;
inline constexpr int64_t kMaxUnrolledBytes = int64_t{64} << 20;

// The Loop of the default ONNX domain.
bool is_loop_node(const onnx::NodeProto& node);

// Replaces each Loop of `graph` (a main graph that passed validate_and_sort()) whose trip count M
// is an initializer (0 to kMaxUnrolledTrips), whose condition input is omitted or an initializer
// holding true, and whose body passes its condition through (its condition output is its
// condition input, an Identity of it, or a constant true), by M copies of its body: in copy k the
// iteration number is an initializer holding k, the condition one holding true, the loop-carried
// inputs the previous copy's outputs (the Loop's initial values for the first), every name the
// body's nodes define renamed under a prefix `<Loop name>/iter<k>/` (made unique); the body's
// initializers are moved into the graph once, under `<Loop name>/body/`. The final carried
// values reach the Loop's outputs through Identity; each scan output is the Concat along a new
// axis 0 of its per-trip values (Unsqueeze'd; a Loop of 0 trips with scan outputs stays, and is
// refused). Each unrolled copy's nodes count against `budget`; a Loop that would exceed it, or
// kMaxUnrolledBytes, stays as it is. Returns the number of Loops replaced.
Result<int> unroll_constant_loops(onnx::GraphProto& graph, ExternalData& external, int64_t opset,
                                  int64_t& budget);

// The Scan of the default ONNX domain (opset 9 on: no batch axis, no sequence_lens).
bool is_scan_node(const onnx::NodeProto& node);

// Replaces each Scan of `graph` (as at unroll_constant_loops) whose scan inputs have a known
// length T along their scan axes (0 to kMaxUnrolledTrips; inferred shapes or initializers) by T
// copies of its body: copy t reads the state values of copy t-1 (the Scan's initial states for
// the first) and element t of each scan input (T-1-t when reversed) through a Gather of a scalar
// index; the final states reach the Scan's outputs through Identity and each scan output is its
// per-copy values stacked along scan_output_axes (reversed when its direction says so). A Scan
// of 0 iterations with scan outputs, or over a budget as at unroll_constant_loops, stays as it
// is. Attributes of the wrong length or value are an InvalidArgument naming the node. Returns the
// number of Scans replaced.
Result<int> unroll_scans(onnx::GraphProto& graph, int64_t opset, int64_t& budget);

// InvalidArgument naming the first Loop or Scan still in `graph`.
Status refuse_remaining_loops(const onnx::GraphProto& graph);

}  // namespace hsched
