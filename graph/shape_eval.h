// Evaluates the ops of shape-computing subgraphs (Shape, Gather, GatherElements, Slice, Concat,
// Unsqueeze, Squeeze, Cast, Range, ConstantOfShape, Equal, Where, Expand, ReduceSum/Prod/Min/Max,
// arithmetic...) on small tensors,
// so that the importer can fold them to constants once input shapes are fixed. This is the one
// place such evaluation lives: backends and the constant folder call it, never re-implement it.
#pragma once

#include <string>
#include <vector>

#include "graph/attribute.h"
#include "hsched/shape.h"
#include "hsched/status.h"
#include "hsched/tensor.h"

namespace hsched {

// No input or output of a folded op may have more elements than this.
inline constexpr int64_t kMaxFoldElements = int64_t{1} << 16;

struct EvalInput {
  const Tensor* value = nullptr;    // null when only the shape is known, or the input is omitted
  Shape shape;                      // the value's shape (enough for Shape and Size)
  DType dtype = DType::kUndefined;  // the value's element type (enough for CastLike's target)
  bool omitted = false;             // an optional input left out ("")
};

// True for the ops evaluate_op() knows.
bool is_evaluable_op(const std::string& op_type);

// True when the op needs only the shape or element type of input `index`, not its value (Shape's
// and Size's input 0, CastLike's 1).
bool needs_only_input_type(const std::string& op_type, int index);

// Computes the outputs of one node. Errors: Unimplemented when the op, a dtype or the size is
// beyond the evaluator (the caller leaves the node alone); InvalidArgument when the inputs are
// inconsistent (an index out of range, a reshape that does not fit).
Result<std::vector<Tensor>> evaluate_op(const std::string& op_type, const AttributeMap& attrs,
                                        const std::vector<EvalInput>& inputs, int64_t opset);

}  // namespace hsched
