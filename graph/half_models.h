// Models stored in half precision: float16 (`model.half()` exports, onnxconverter-common's
// float16 conversion, mixed-precision exports) and bfloat16. Few hsched kernels take half types,
// so such a graph is computed in float32 between its interface and its explicit roundings, as
// ONNX Runtime's CPU provider runs one through casts around its float kernels. The planner then
// chooses each partition's precision as for any float32 model (fp16 storage on a GPU, fp16 on the
// NPU, where the policy asks for them).
#pragma once

#include "graph/graph.h"

namespace hsched {

// Whether a node other than a Cast or CastLike reads or writes a float16 or bfloat16 value.
bool computes_in_half(const Graph& graph);

// `graph` rewritten so that no node but a rounding Cast reads or writes a half value, when
// computes_in_half(graph); `graph` unchanged otherwise:
// - a half graph input keeps its name and type and is read through a Cast to float32;
// - a half graph output keeps its name and type, written by a Cast of its float32 value (whose
//   name gets a suffix);
// - half constants become float32 (exact), as do ConstantOfShape's value and a `dtype`
//   attribute (EyeLike, RandomNormal...) naming a half type;
// - a Cast or CastLike to a half type stays a rounding: a Cast to that type, read through a Cast
//   back to float32;
// - every other half value is float32.
// Names, shapes, node order and every other value are kept. Runs on an imported graph, whose
// values all have their inferred types; a value of undefined type is left as it is.
Graph widen_half_values(Graph graph);

}  // namespace hsched
