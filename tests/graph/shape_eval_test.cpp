// The small-tensor evaluator behind shape folding.
#include "graph/shape_eval.h"

#include <gtest/gtest.h>

namespace hsched {
namespace {

Tensor i64(std::vector<int64_t> dims, std::vector<int64_t> values) {
  return Tensor::from_vector(DType::kI64, std::move(dims), values);
}

std::vector<int64_t> ints(const Tensor& t) {
  auto v = t.values<int64_t>();
  return {v.begin(), v.end()};
}

Result<Tensor> eval(const std::string& op, const std::vector<const Tensor*>& in,
                    AttributeMap attrs = {}, int64_t opset = 17) {
  std::vector<EvalInput> inputs;
  for (const Tensor* t : in) {
    EvalInput e;
    e.value = t;
    if (t != nullptr) e.shape = t->shape();
    e.omitted = t == nullptr;
    inputs.push_back(e);
  }
  HSCHED_ASSIGN_OR_RETURN(auto out, evaluate_op(op, attrs, inputs, opset));
  return out.front();
}

TEST(ShapeEvalTest, ShapeNeedsOnlyTheInputShape) {
  EvalInput x;
  x.shape = Shape({2, 3, 5});
  auto out = evaluate_op("Shape", {{"start", int64_t{1}}}, {x}, 17);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(ints(out->front()), (std::vector<int64_t>{3, 5}));
  x.shape = Shape({2, kDynamicDim});
  EXPECT_EQ(evaluate_op("Shape", {}, {x}, 17).status().code(), ErrorCode::kUnimplemented);
}

TEST(ShapeEvalTest, GatherTakesNegativeIndices) {
  const Tensor data = i64({4}, {10, 20, 30, 40});
  const Tensor idx = i64({2}, {-1, 0});
  auto out = eval("Gather", {&data, &idx});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(ints(*out), (std::vector<int64_t>{40, 10}));
  const Tensor bad = i64({}, {4});
  EXPECT_EQ(eval("Gather", {&data, &bad}).status().code(), ErrorCode::kInvalidArgument);
}

// BERT's exported position ids: GatherElements over axis 1 of a [1, 4] tensor by [1, 3]
// indices, a negative one among them; an index out of range and a rank mismatch are refused.
TEST(ShapeEvalTest, GatherElementsAlongAnAxis) {
  const Tensor data = i64({2, 4}, {10, 11, 12, 13, 20, 21, 22, 23});
  const Tensor idx = i64({2, 3}, {3, 0, -1, 1, 1, 2});
  auto out = eval("GatherElements", {&data, &idx}, {{"axis", int64_t{1}}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(out->dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ints(*out), (std::vector<int64_t>{13, 10, 13, 21, 21, 22}));
  const Tensor rows = i64({1, 2}, {1, 0});
  auto by_rows = eval("GatherElements", {&data, &rows});  // axis 0
  ASSERT_TRUE(by_rows.is_ok()) << by_rows.status().message();
  EXPECT_EQ(ints(*by_rows), (std::vector<int64_t>{20, 11}));
  const Tensor bad = i64({1, 1}, {4});
  EXPECT_EQ(eval("GatherElements", {&data, &bad}, {{"axis", int64_t{1}}}).status().code(),
            ErrorCode::kInvalidArgument);
  const Tensor flat = i64({2}, {0, 1});
  EXPECT_EQ(eval("GatherElements", {&data, &flat}).status().code(), ErrorCode::kInvalidArgument);
}

TEST(ShapeEvalTest, SliceWithNegativeStepAndHugeEnd) {
  const Tensor data = i64({5}, {0, 1, 2, 3, 4});
  const Tensor starts = i64({1}, {-1});
  const Tensor ends = i64({1}, {INT64_MIN});
  const Tensor axes = i64({1}, {0});
  const Tensor steps = i64({1}, {-2});
  auto out = eval("Slice", {&data, &starts, &ends, &axes, &steps});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(ints(*out), (std::vector<int64_t>{4, 2, 0}));
  const Tensor start0 = i64({1}, {1});
  const Tensor end_max = i64({1}, {INT64_MAX});
  out = eval("Slice", {&data, &start0, &end_max});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(ints(*out), (std::vector<int64_t>{1, 2, 3, 4}));
}

// Exporters flatten with ReduceProd(Shape(x)); the reductions fold on small tensors.
TEST(ShapeEvalTest, ReductionsOverAxesOrEverything) {
  const Tensor dims = i64({4}, {2, 3, 4, 5});
  auto prod = eval("ReduceProd", {&dims}, {{"keepdims", int64_t{1}}});
  ASSERT_TRUE(prod.is_ok()) << prod.status().message();
  EXPECT_EQ(prod->dims(), (std::vector<int64_t>{1}));
  EXPECT_EQ(ints(*prod), (std::vector<int64_t>{120}));
  const Tensor m = i64({2, 3}, {1, 7, 3, 4, 5, -6});
  const Tensor axis1 = i64({1}, {-1});
  auto sum = eval("ReduceSum", {&m, &axis1}, {{"keepdims", int64_t{0}}});
  ASSERT_TRUE(sum.is_ok()) << sum.status().message();
  EXPECT_EQ(sum->dims(), (std::vector<int64_t>{2}));
  EXPECT_EQ(ints(*sum), (std::vector<int64_t>{11, 3}));
  auto max = eval("ReduceMax", {&m}, {{"axes", std::vector<int64_t>{0}}});
  ASSERT_TRUE(max.is_ok()) << max.status().message();
  EXPECT_EQ(max->dims(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(ints(*max), (std::vector<int64_t>{4, 7, 3}));
  const Tensor none = i64({0}, {});
  auto noop = eval("ReduceSum", {&m, &none}, {{"noop_with_empty_axes", int64_t{1}}});
  ASSERT_TRUE(noop.is_ok()) << noop.status().message();
  EXPECT_EQ(ints(*noop), ints(m));
  const Tensor huge = i64({2}, {int64_t{1} << 62, 4});
  EXPECT_EQ(eval("ReduceProd", {&huge}).status().code(), ErrorCode::kUnimplemented);
  const Tensor out_of_range = i64({1}, {2});
  EXPECT_EQ(eval("ReduceSum", {&m, &out_of_range}).status().code(), ErrorCode::kInvalidArgument);
}

TEST(ShapeEvalTest, ConcatUnsqueezeSqueezeReshape) {
  const Tensor a = i64({}, {2});
  const Tensor axes = i64({1}, {0});
  auto u = eval("Unsqueeze", {&a, &axes});
  ASSERT_TRUE(u.is_ok());
  EXPECT_EQ(u->dims(), (std::vector<int64_t>{1}));
  const Tensor rest = i64({2}, {-1, 64});
  auto c = eval("Concat", {&*u, &rest}, {{"axis", int64_t{-1}}});
  ASSERT_TRUE(c.is_ok());
  EXPECT_EQ(ints(*c), (std::vector<int64_t>{2, -1, 64}));
  auto s = eval("Squeeze", {&*u});
  ASSERT_TRUE(s.is_ok());
  EXPECT_TRUE(s->dims().empty());
  const Tensor six = i64({6}, {1, 2, 3, 4, 5, 6});
  const Tensor to = i64({2}, {0, -1});
  const Tensor two_by_three = i64({2, 3}, {1, 2, 3, 4, 5, 6});
  auto r = eval("Reshape", {&two_by_three, &to});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->dims(), (std::vector<int64_t>{2, 3}));
  const Tensor bad = i64({2}, {4, -1});
  EXPECT_EQ(eval("Reshape", {&six, &bad}).status().code(), ErrorCode::kInvalidArgument);
}

TEST(ShapeEvalTest, WhereEqualExpandBroadcast) {
  const Tensor shape = i64({3}, {1, -1, 4});
  const Tensor minus = i64({}, {-1});
  auto eq = eval("Equal", {&shape, &minus});
  ASSERT_TRUE(eq.is_ok());
  EXPECT_EQ(eq->dtype(), DType::kBool);
  const Tensor ones = i64({}, {1});
  auto where = eval("Where", {&*eq, &ones, &shape});
  ASSERT_TRUE(where.is_ok());
  EXPECT_EQ(ints(*where), (std::vector<int64_t>{1, 1, 4}));
  const Tensor col = i64({2, 1}, {7, 8});
  const Tensor target = i64({2}, {1, 3});
  auto ex = eval("Expand", {&col, &target});
  ASSERT_TRUE(ex.is_ok());
  EXPECT_EQ(ex->dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ints(*ex), (std::vector<int64_t>{7, 7, 7, 8, 8, 8}));
}

TEST(ShapeEvalTest, RangeCastConstantOfShape) {
  const Tensor start = i64({}, {0}), limit = i64({}, {10}), delta = i64({}, {3});
  auto r = eval("Range", {&start, &limit, &delta});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(ints(*r), (std::vector<int64_t>{0, 3, 6, 9}));
  auto f = eval("Cast", {&*r}, {{"to", int64_t{1}}});
  ASSERT_TRUE(f.is_ok());
  EXPECT_EQ(f->dtype(), DType::kF32);
  EXPECT_EQ(f->values<float>()[3], 9.0f);
  const Tensor dims = i64({2}, {2, 2});
  auto filled = eval("ConstantOfShape", {&dims},
                     {{"value", Tensor::from_vector(DType::kI64, {1}, std::vector<int64_t>{5})}});
  ASSERT_TRUE(filled.is_ok());
  EXPECT_EQ(ints(*filled), (std::vector<int64_t>{5, 5, 5, 5}));
}

TEST(ShapeEvalTest, ArithmeticRefusesOverflowAndDivisionByZero) {
  const Tensor big = i64({}, {INT64_MAX});
  const Tensor two = i64({}, {2});
  const Tensor zero = i64({}, {0});
  EXPECT_EQ(eval("Mul", {&big, &two}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(eval("Add", {&big, &big}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(eval("Div", {&two, &zero}).status().code(), ErrorCode::kInvalidArgument);
  const Tensor seven = i64({}, {-7});
  auto div = eval("Div", {&seven, &two});
  ASSERT_TRUE(div.is_ok());
  EXPECT_EQ(ints(*div)[0], -3);  // truncates
}

// torch.onnx's F.pad pads, [begin..., end...] from pairs: [4, 2] pairs transposed to [2, 4]; the
// default perm reverses the axes; a perm not of every axis once is refused.
TEST(ShapeEvalTest, TransposeByPermOrReversed) {
  const Tensor pairs = i64({4, 2}, {0, 0, 0, 0, 0, 1, 0, 3});
  auto out = eval("Transpose", {&pairs}, {{"perm", std::vector<int64_t>{1, 0}}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(out->dims(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(ints(*out), (std::vector<int64_t>{0, 0, 0, 0, 0, 0, 1, 3}));
  const Tensor cube = i64({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  auto reversed = eval("Transpose", {&cube});
  ASSERT_TRUE(reversed.is_ok()) << reversed.status().message();
  EXPECT_EQ(reversed->dims(), (std::vector<int64_t>{3, 2, 1}));
  EXPECT_EQ(ints(*reversed), (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(eval("Transpose", {&cube}, {{"perm", std::vector<int64_t>{0, 0, 1}}}).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(eval("Transpose", {&cube}, {{"perm", std::vector<int64_t>{1, 0}}}).status().code(),
            ErrorCode::kInvalidArgument);
}

// timm's "same" padding: max(amount, 0) exported as Clip with only a lower bound; the bounds
// are attributes before opset 11.
TEST(ShapeEvalTest, ClipByInputsOrAttributes) {
  const Tensor x = i64({4}, {-3, 0, 2, 9});
  const Tensor zero = i64({}, {0});
  const Tensor five = i64({}, {5});
  auto low = eval("Clip", {&x, &zero});
  ASSERT_TRUE(low.is_ok()) << low.status().message();
  EXPECT_EQ(ints(*low), (std::vector<int64_t>{0, 0, 2, 9}));
  auto high = eval("Clip", {&x, nullptr, &five});
  ASSERT_TRUE(high.is_ok()) << high.status().message();
  EXPECT_EQ(ints(*high), (std::vector<int64_t>{-3, 0, 2, 5}));
  const Tensor real = Tensor::from_vector(DType::kF32, {2}, std::vector<float>{-1.5f, 7.0f});
  auto old = eval("Clip", {&real}, {{"min", 0.0f}, {"max", 6.0f}}, 6);
  ASSERT_TRUE(old.is_ok()) << old.status().message();
  const auto values = old->values<float>();
  EXPECT_EQ(std::vector<float>(values.begin(), values.end()), (std::vector<float>{0.0f, 6.0f}));
  const Tensor half = Tensor::from_vector(DType::kF32, {}, std::vector<float>{0.5f});
  EXPECT_EQ(eval("Clip", {&x, &half}).status().code(), ErrorCode::kInvalidArgument);
}

TEST(ShapeEvalTest, LargeResultsAreLeftUnfolded) {
  const Tensor dims = i64({2}, {1024, 1024});
  EXPECT_EQ(eval("ConstantOfShape", {&dims}).status().code(), ErrorCode::kUnimplemented);
}

}  // namespace
}  // namespace hsched
