// What `hsched quantize` changes in a model, decided from the ONNX graph alone (before any
// calibration run): which nodes are quantized, which tensors get a QuantizeLinear/
// DequantizeLinear pair, which initializers become int8 weights or int32 biases, which Relus fold
// into their input's quantization. quantize.cpp calibrates the activations and writes the model.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "hsched/quantize.h"

namespace onnx {
class GraphProto;
}

namespace hsched {

// A tensor whose readers get DequantizeLinear(QuantizeLinear(source)) in its place.
struct ActivationQuant {
  std::string tensor;  // the value readers read (its range is calibrated)
  // What the QuantizeLinear reads: `tensor`, or a folded Relu's input (then `tensor` is the
  // Relu's output, which is no longer produced).
  std::string source;
  // A Softmax's output: quantized over [0, 1] whatever calibration saw, as ONNX Runtime's and
  // TensorFlow Lite's quantizers do (ONNX Runtime's QLinearSoftmax scales by floor(1 / scale)).
  bool unit_range = false;
};

// A float initializer written as int8; `axis` of its per-channel scales, -1 for one scale.
struct WeightQuant {
  std::string name;
  int axis = -1;
};

// A node's float bias written as int32 at scale input_scale * weight_scale (Conv input 2, Gemm
// input C), so that it folds into the integer op.
struct BiasQuant {
  int node = 0;  // index into the graph's nodes
  std::string bias, input, weight;
};

struct QuantizePlan {
  std::vector<ActivationQuant> activations;  // in the graph's order
  std::vector<WeightQuant> weights;
  std::vector<BiasQuant> biases;
  std::set<int> removed;                     // folded Relu nodes
  std::map<std::string, int64_t> quantized;  // op type -> nodes
  std::map<std::string, int64_t> kept;       // why a node of a quantized op type stayed fp32
};

// `graph` is the model as hsched imported it (for the dtypes of values). `per_channel`: the
// weights' scales per output channel (else one per tensor).
QuantizePlan plan_quantization(const onnx::GraphProto& proto, const Graph& graph,
                               const QuantizeOptions& options, bool per_channel);

}  // namespace hsched
