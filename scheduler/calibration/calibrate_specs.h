// Calibration's benchmarks (scheduler/calibration/calibrate.h): small graphs built in memory, each
// a chain (or a fan, where the shape changes) of equal nodes, so that a short and a long one differ
// by the nodes alone. Internal to calibration.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/onnx_builder.h"
#include "hsched/device.h"
#include "hsched/status.h"
#include "hsched/tensor.h"

namespace hsched::calibration {

struct Spec {
  std::string name;
  CostClass cost_class = CostClass::kElementwise;
  Precision precision = Precision::kFp32;
  int nodes = 0;               // fixed chain length; 0: measured as a short and a long chain
  bool fused_on_host = false;  // measured on the CPU only (fused there, or in its CPU setting)
  // Built in fp32, run in the QDQ form hsched's quantizer gives it (a QDQ model's 8-bit layers,
  // its Q/DQ nodes fused into them), planned in the device's base precision: a point of its
  // qdq_curves. `precision` is then int8 (the name's "_int8_qdq").
  bool quantized = false;
  std::function<void(OnnxBuilder&, int nodes)> build;
  // The node of the chain's first link whose work the point is plotted at (a fan's first node
  // may be the producer every link reads).
  int work_node = 0;
  // Where set, the same chain without what is measured: the point is the difference of the two
  // (an epilogue: a MatMul chain with and without its fused GELU).
  std::function<void(OnnxBuilder&, int nodes)> baseline;
  // Where set, a run's figure is the time of this op's steps alone, profiled: each link's other
  // nodes set the scene (a MatMul before a Softmax, as in attention) but are not counted.
  std::string timed_op;
};

// The precision of a device's byte-class, overhead and copy benchmarks: fp32, or where the
// device does not compute fp32 (an NPU), the first it computes besides int8.
Precision base_precision(const DeviceProfile& device);

// What to measure on `device`: every compute class in each precision it computes, the byte
// classes in base_precision (those fused into one step on the CPU only there).
std::vector<Spec> specs_for(const DeviceProfile& device);

// Building blocks of the benchmarks (spec_graph.cpp).

// The seed of the next random initializer: each benchmark's weights differ from the last's.
uint32_t next_seed();

// y = a k x k Conv of x (`cin` channels) to `cout` by `stride`, padded by `pad`, with a bias;
// depthwise (cout == cin, a group per channel) or of one group. Its weights are w and w + ".b".
void add_conv(OnnxBuilder& b, const std::string& x, int64_t cin, int64_t cout, int64_t k,
              int64_t stride, int64_t pad, bool depthwise, const std::string& w,
              const std::string& y);

// A chain of `nodes` shape-keeping nodes `add(b, in, out)` over x of `dims`.
Spec chain_spec(std::string name, CostClass cost_class, std::vector<int64_t> dims,
                std::function<void(OnnxBuilder&, const std::string&, const std::string&)> add);

// "1K", "4M": a benchmark's size in its name.
std::string size_name(int64_t elements);

using AddNode =
    std::function<void(OnnxBuilder&, const std::vector<std::string>&, const std::string&)>;

// A fan of `nodes` `op` nodes over x [1, c, h, h] (and z alike when `inputs` is 2), each made by
// `add(b, inputs, output)`, its output of `out` dims. `on_host`: as a CNN runs them on the CPU,
// each node's output read by a GlobalAveragePool (which keeps the fan's outputs small and the
// node in the CPU's channels-last layout), their steps timed; `from_convs`: the inputs are what
// 1x1 Convs of x wrote in that layout, as a layer's are (a fan over the plain graph input paid a
// reorder per node: 10 GB/s for a stride-2 MaxPool of 1 Mi elements on this machine).
Spec fan_spec(std::string name, CostClass cost_class, const std::string& op, int inputs,
              const std::vector<int64_t>& image, const std::vector<int64_t>& out, bool on_host,
              bool from_convs, AddNode add);

// Inputs uniform in [-1, 1) for every graph input (float), the same on every call.
std::vector<Tensor> random_inputs(const Graph& graph);

// The benchmark's graph with `nodes` nodes: as built, or where the spec is `quantized` and
// `as_run`, its QDQ form as hsched's quantizer writes it (activation ranges from random_inputs),
// its outputs left 8-bit.
Result<Graph> spec_graph(const Spec& spec, int nodes, bool as_run = true);

// The work of the node a benchmark's point is plotted at, as the cost model counts it: on the
// graph as built (a QDQ form has the same FLOPs at other node ids). `as_run`, where given, is
// spec_graph's result already made: it is that graph unless the spec is quantized.
Result<double> point_work(const Spec& spec, int nodes, const DeviceProfile& device,
                          const Graph* as_run = nullptr);

// A chain of `nodes` Relus over a few floats: what a partition and a node cost around the work.
Spec tiny_spec(int nodes);

// A partition that wakes a device's threads: a MatMul of [256, 256] by constant weights and a
// residual Add (oneDNN's OpenMP team and oneTBB's workers on the CPU).
Spec wake_spec();

// One Relu over `elements` floats: its partition's upload and download are the copy curves.
Spec copy_spec(int64_t elements);

}  // namespace hsched::calibration
