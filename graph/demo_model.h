// The built-in demo model: a small CNN built in memory, no file needed.
#pragma once

#include "graph/graph.h"
#include "hsched/status.h"

namespace onnx {
class ModelProto;
}

namespace hsched {

inline constexpr const char* kDemoModelName = "demo-cnn";

// conv-bn-relu stem, two residual blocks (one with stride 2), global pool, flatten, gemm.
// Input "input" 1x3x64x64 f32, output "logits" 1x10. Weights are seeded, so deterministic.
onnx::ModelProto build_demo_model_proto();
Result<Graph> build_demo_graph();

}  // namespace hsched
