// Static shapes for the whole graph: ONNX shape inference, then hsched's evaluation of
// shape-computing subgraphs (graph/shape_eval.h) folded into initializers, repeated until
// nothing more folds.
#pragma once

#include "graph/tensor_proto.h"
#include "hsched/status.h"

namespace onnx {
class ModelProto;
}

namespace hsched {

// Expects a model that passed validate_and_sort(). Constant nodes become initializers first.
// Each round, an If whose condition has become an initializer is replaced by its chosen branch
// (graph/if_inline.h); an If left when nothing more folds is an InvalidArgument naming it.
// `forget_declared_shapes` drops exporter-declared intermediate and output shapes (kept dtypes)
// so that new input shapes do not clash with them.
Status infer_and_fold(onnx::ModelProto& model, int64_t opset, ExternalData& external,
                      bool forget_declared_shapes);

}  // namespace hsched
