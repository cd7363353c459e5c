// The value type of the shape evaluator (graph/shape_eval.h): small tensors with their values
// widened to int64 or double, their conversions, broadcasting, and elementwise arithmetic,
// every integer operation overflow-checked. Internal to graph/.
#pragma once

#include <string>
#include <vector>

#include "graph/shape_eval.h"

namespace hsched::shape_eval_detail {

// A small tensor with its values widened: integers and bools in `ints`, floats in `reals`.
struct Small {
  DType dtype = DType::kI64;
  std::vector<int64_t> dims;
  std::vector<int64_t> ints;
  std::vector<double> reals;

  bool is_real() const { return is_floating(dtype); }
  size_t size() const { return is_real() ? reals.size() : ints.size(); }
  double real(size_t i) const { return is_real() ? reals[i] : static_cast<double>(ints[i]); }
};

// Unimplemented: a result of `elements` is beyond kMaxFoldElements (the caller leaves the node).
Status too_big(int64_t elements);
// Element count of `dims`, refused past kMaxFoldElements.
Result<int64_t> bounded_elements(const std::vector<int64_t>& dims);
Result<Small> to_small(const Tensor& t);
Tensor to_tensor(const Small& s);
// A double as int64, refused when it does not fit (no undefined behaviour).
Result<int64_t> real_to_int(double v);
Small make_ints(DType dtype, std::vector<int64_t> dims, std::vector<int64_t> ints);
// numpy broadcast of several shapes; for each output element, the input element it reads.
Result<std::vector<int64_t>> broadcast_dims(const std::vector<const std::vector<int64_t>*>& all);
std::vector<size_t> broadcast_map(const std::vector<int64_t>& out_dims,
                                  const std::vector<int64_t>& in_dims);
// Add Sub Mul Div Mod Min Max, comparisons, And Or (all inputs of one kind: integer or float).
Result<Small> binary(const std::string& op, const std::vector<const Small*>& in);
// Identity Not Neg Abs Sqrt Floor Ceil Reciprocal.
Result<Small> unary(const std::string& op, const Small& x);

}  // namespace hsched::shape_eval_detail
