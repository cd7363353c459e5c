// ONNX If, Loop and Scan at import: a condition that folds to a constant inlines the chosen
// branch; one known only at run time runs both branches and selects; a Loop of a constant trip
// count and a Scan over inputs of a known length are unrolled (each checked by running the
// imported graph on the CPU); malformed ones, and Loops and Scans that cannot unroll, are refused
// with one clear line.
#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "support/cpu_run.h"
#include "support/graph_query.h"

namespace hsched {
namespace {

using test::has_op;

constexpr int64_t kOpset = 17;
const std::vector<float> kX{1, -2, 3, -4, 5, -6};  // the input x, of shape [2, 3]

void add_bool_initializer(onnx::GraphProto& graph, const std::string& name, bool value) {
  onnx::TensorProto& tensor = *graph.add_initializer();
  tensor.set_name(name);
  tensor.set_data_type(dtype_to_onnx(DType::kBool));
  tensor.add_int32_data(value ? 1 : 0);
}

// A branch: a graph of no inputs whose nodes and initializers the caller adds to the builder.
OnnxBuilder branch(const std::string& name) { return OnnxBuilder(kOpset, name); }

void set_branch(onnx::NodeProto& node, const std::string& attr_name, OnnxBuilder& body) {
  onnx::AttributeProto& attr = *node.add_attribute();
  attr.set_name(attr_name);
  attr.set_type(onnx::AttributeProto::GRAPH);
  *attr.mutable_g() = body.model().graph();
}

onnx::NodeProto& add_if(OnnxBuilder& b, const std::string& cond, const std::string& out,
                        OnnxBuilder& then_branch, OnnxBuilder& else_branch,
                        const std::string& name = "if") {
  onnx::NodeProto& node = b.node("If", {cond}, {out}, name);
  set_branch(node, "then_branch", then_branch);
  set_branch(node, "else_branch", else_branch);
  return node;
}

// then: x + 1, reading x and `one` from the main graph; else: x * 3 with a constant of its own.
void add_plus_or_times(OnnxBuilder& b, const std::string& cond) {
  b.initializer_f32("one", {1}, {1.0f});
  OnnxBuilder then_branch = branch("then");
  then_branch.output("sum", DType::kF32, {2, 3});
  then_branch.node("Add", {"x", "one"}, {"sum"}, "add");
  OnnxBuilder else_branch = branch("else");
  else_branch.initializer_f32("three", {1}, {3.0f}).output("product", DType::kF32, {2, 3});
  else_branch.node("Mul", {"x", "three"}, {"product"}, "mul");
  add_if(b, cond, "y", then_branch, else_branch);
}

Result<Graph> import(OnnxBuilder& b, const ImportOptions& options = {}) {
  return import_onnx_model(b.model(), options, "if.onnx", {});
}

// Runs the graph on the CPU with x = kX and returns its only output.
std::vector<float> run_x_on_cpu(const Graph& graph) {
  const auto outputs = test::run_on_cpu(graph, {Tensor::from_vector(DType::kF32, {2, 3}, kX)});
  if (outputs.size() != 1) return {};
  const auto values = outputs.front().values<float>();
  return {values.begin(), values.end()};
}

std::vector<float> map_x(float (*f)(float)) {
  std::vector<float> out;
  for (float v : kX) out.push_back(f(v));
  return out;
}

TEST(IfTest, ConstantConditionTakesTheRightBranch) {
  for (bool condition : {true, false}) {
    SCOPED_TRACE(condition);
    OnnxBuilder b(kOpset);
    b.input("x", DType::kF32, {2, 3}).output("y", DType::kF32, {2, 3});
    add_bool_initializer(*b.model().mutable_graph(), "cond", condition);
    add_plus_or_times(b, "cond");
    auto graph = import(b);
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    EXPECT_FALSE(has_op(*graph, "If"));
    EXPECT_EQ(has_op(*graph, "Add"), condition);
    EXPECT_EQ(has_op(*graph, "Mul"), !condition);
    const Value& y = graph->value(graph->outputs().at(0));
    EXPECT_EQ(y.dtype, DType::kF32);
    EXPECT_EQ(y.shape.dims, (std::vector<int64_t>{2, 3}));
    // The condition and what only the other branch read leave nothing behind.
    EXPECT_FALSE(graph->find_value("cond"));
    EXPECT_EQ(graph->find_value("one").has_value(), condition);
    const std::vector<float> expected =
        condition ? map_x([](float v) { return v + 1; }) : map_x([](float v) { return v * 3; });
    EXPECT_EQ(run_x_on_cpu(*graph), expected);
  }
}

// Shape(x)[0] == 2: the usual exporter pattern for a batch-size special case.
void add_shape_condition(OnnxBuilder& b) {
  b.initializer_i64("zero", {}, {0}).initializer_i64("two", {}, {2});
  b.node("Shape", {"x"}, {"shape"}, "shape");
  b.node("Gather", {"shape", "zero"}, {"batch"}, "batch");
  b.node("Equal", {"batch", "two"}, {"cond"}, "is_two");
}

TEST(IfTest, ConditionComputedFromShapesFolds) {
  OnnxBuilder b(kOpset);
  b.input("x", DType::kF32, {2, 3}).output("y", DType::kF32, {2, 3});
  add_shape_condition(b);
  add_plus_or_times(b, "cond");
  auto graph = import(b);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_FALSE(has_op(*graph, "If"));
  EXPECT_FALSE(has_op(*graph, "Equal"));
  EXPECT_EQ(run_x_on_cpu(*graph), map_x([](float v) { return v + 1; }));
}

TEST(IfTest, DynamicShapeConditionFoldsOnceTheInputShapeIsFixed) {
  auto build = [] {
    OnnxBuilder b(kOpset);
    b.input("x", DType::kF32, {kDynamicDim, 3}).output("y", DType::kF32, {kDynamicDim, 3});
    add_shape_condition(b);
    add_plus_or_times(b, "cond");
    return b;
  };
  OnnxBuilder dynamic = build();
  auto predicated = import(dynamic);  // the batch, hence the condition, known only at run time
  ASSERT_TRUE(predicated.is_ok()) << predicated.status().message();
  EXPECT_TRUE(has_op(*predicated, "Where"));

  OnnxBuilder fixed = build();
  ImportOptions options;
  ASSERT_TRUE(add_input_shape_flag("x=2,3", options).is_ok());
  auto graph = import(fixed, options);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_FALSE(has_op(*graph, "Where"));
  EXPECT_EQ(run_x_on_cpu(*graph), map_x([](float v) { return v + 1; }));
}

// The branch reads the main graph's z and defines its own `w`, shadowing the main graph's `w`
// (ONNX allows an initializer to shadow an outer name) and `sum`, a name free in the main graph
// but taken by the other branch.
TEST(IfTest, BranchNamesDoNotClashWithTheMainGraph) {
  OnnxBuilder b(kOpset);
  b.input("x", DType::kF32, {2, 3}).output("y", DType::kF32, {2, 3});
  b.initializer_f32("w", {1}, {10.0f});
  add_bool_initializer(*b.model().mutable_graph(), "cond", true);
  b.node("Add", {"x", "w"}, {"z"}, "add_w");
  OnnxBuilder then_branch = branch("then");
  then_branch.initializer_f32("w", {1}, {2.0f}).output("sum", DType::kF32, {2, 3});
  then_branch.node("Mul", {"z", "w"}, {"sum"}, "scale");
  OnnxBuilder else_branch = branch("else");
  else_branch.output("sum", DType::kF32, {2, 3});
  else_branch.node("Neg", {"z"}, {"sum"}, "neg");
  add_if(b, "cond", "y", then_branch, else_branch);
  auto graph = import(b);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  std::set<std::string> names;
  for (const auto& value : graph->values()) {
    EXPECT_TRUE(names.insert(value.name).second) << "value '" << value.name << "' twice";
  }
  EXPECT_EQ(run_x_on_cpu(*graph), map_x([](float v) { return (v + 10) * 2; }));
}

TEST(IfTest, BranchMayReturnAnOuterValue) {
  OnnxBuilder b(kOpset);
  b.input("x", DType::kF32, {2, 3}).output("y", DType::kF32, {2, 3});
  add_bool_initializer(*b.model().mutable_graph(), "cond", false);
  b.node("Relu", {"x"}, {"r"}, "relu");
  OnnxBuilder then_branch = branch("then");
  then_branch.output("n", DType::kF32, {2, 3});
  then_branch.node("Neg", {"r"}, {"n"}, "neg");
  OnnxBuilder else_branch = branch("else");
  else_branch.output("r", DType::kF32, {2, 3});
  add_if(b, "cond", "y", then_branch, else_branch);
  auto graph = import(b);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(run_x_on_cpu(*graph), map_x([](float v) { return v > 0 ? v : 0.0f; }));
}

// The chosen branch holds another If, whose own branch reads the outer branch's `t` and shadows
// its `k`: references inside the nested branch are renamed with the outer one.
TEST(IfTest, NestedIfInsideTheChosenBranch) {
  OnnxBuilder b(kOpset);
  b.input("x", DType::kF32, {2, 3}).output("y", DType::kF32, {2, 3});
  add_bool_initializer(*b.model().mutable_graph(), "cond", true);

  OnnxBuilder inner_then = branch("inner_then");
  inner_then.output("u", DType::kF32, {2, 3});
  inner_then.node("Neg", {"t"}, {"u"}, "neg");
  OnnxBuilder inner_else = branch("inner_else");
  inner_else.initializer_f32("k", {1}, {5.0f}).output("v", DType::kF32, {2, 3});
  inner_else.node("Sub", {"t", "k"}, {"v"}, "sub");

  OnnxBuilder outer_then = branch("outer_then");
  outer_then.initializer_f32("k", {1}, {1.0f}).output("w", DType::kF32, {2, 3});
  add_bool_initializer(*outer_then.model().mutable_graph(), "inner_cond", false);
  outer_then.node("Add", {"x", "k"}, {"t"}, "add");
  add_if(outer_then, "inner_cond", "w", inner_then, inner_else, "inner");
  OnnxBuilder outer_else = branch("outer_else");
  outer_else.output("x2", DType::kF32, {2, 3});
  outer_else.node("Identity", {"x"}, {"x2"}, "copy");
  add_if(b, "cond", "y", outer_then, outer_else, "outer");

  auto graph = import(b);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_FALSE(has_op(*graph, "If"));
  const auto& nodes = graph->nodes();
  EXPECT_TRUE(std::any_of(nodes.begin(), nodes.end(), [](const Node& node) {
    return node.name == "outer/then/inner/else/sub";
  })) << "inlined nodes are named after the Ifs they came from";
  EXPECT_EQ(run_x_on_cpu(*graph), map_x([](float v) { return (v + 1) - 5; }));
}

// A condition known only at run time (a graph input, or computed from x's values): both
// branches run and Where selects; each branch taken in turn.
TEST(IfTest, ConditionKnownOnlyAtRunTimeTakesEitherBranch) {
  for (const bool computed : {false, true}) {
    SCOPED_TRACE(computed);
    OnnxBuilder b(kOpset);
    b.input("x", DType::kF32, {2, 3}).output("y", DType::kF32, {2, 3});
    if (computed) {  // ReduceSum(x) > threshold
      b.input("threshold", DType::kF32, {});
      set_attr(b.node("ReduceSum", {"x"}, {"total"}, "total"), "keepdims", int64_t{0});
      b.node("Greater", {"total", "threshold"}, {"flag"}, "above");
    } else {
      b.input("flag", DType::kBool, {1});
    }
    add_plus_or_times(b, "flag");
    auto graph = import(b);
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    EXPECT_FALSE(has_op(*graph, "If"));
    EXPECT_TRUE(has_op(*graph, "Where"));
    EXPECT_EQ(graph->value(graph->outputs().at(0)).shape.dims, (std::vector<int64_t>{2, 3}));
    auto program = cpu::CpuProgram::compile(*graph, {});
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    const Tensor x = Tensor::from_vector(DType::kF32, {2, 3}, kX);  // sums to -3
    for (const bool take_then : {true, false}) {
      const Tensor second =
          computed
              ? Tensor::from_vector(DType::kF32, {}, std::vector<float>{take_then ? -10.0f : 10.0f})
              : Tensor::from_vector(DType::kBool, {1},
                                    std::vector<uint8_t>{static_cast<uint8_t>(take_then)});
      auto outputs = (*program)->run({x, second});
      ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
      const auto y = outputs->at(0).values<float>();
      EXPECT_EQ(std::vector<float>(y.begin(), y.end()), take_then
                                                            ? map_x([](float v) { return v + 1; })
                                                            : map_x([](float v) { return v * 3; }))
          << take_then;
    }
  }
}

// If gives one branch's shape or the other's; computing both and selecting cannot, so branches
// of different shapes are refused when the condition is known only at run time.
TEST(IfTest, RunTimeConditionWithBranchesOfDifferentShapesIsRefused) {
  OnnxBuilder b(kOpset);
  b.input("x", DType::kF32, {2, 3}).input("flag", DType::kBool, {});
  b.output("y", DType::kF32, {kDynamicDim, 3});
  b.initializer_i64("rows", {1}, {0});
  OnnxBuilder then_branch = branch("then");
  then_branch.output("all", DType::kF32, {2, 3});
  then_branch.node("Identity", {"x"}, {"all"}, "all");
  OnnxBuilder else_branch = branch("else");
  else_branch.output("first", DType::kF32, {1, 3});
  else_branch.node("Gather", {"x", "rows"}, {"first"}, "first");
  add_if(b, "flag", "y", then_branch, else_branch);
  const Status status = import(b).status();
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "if.onnx: node 'if' (If): its condition is known only at run time and its branches "
            "give output 0 as FLOAT 2x3 and FLOAT 1x3; hsched computes both branches and "
            "selects, which needs the same dtype and shape");
}

TEST(IfTest, ConditionMustBeOneBool) {
  OnnxBuilder b(kOpset);
  b.input("x", DType::kF32, {2, 3}).output("y", DType::kF32, {2, 3});
  b.initializer_f32("cond", {2}, {1.0f, 0.0f});
  add_plus_or_times(b, "cond");
  const Status status = import(b).status();
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(status.message().find("node 'if' (If): condition 'cond' is a f32 tensor of 2 elements"),
            std::string::npos)
      << status.message();
}

// Scan(s0, x) over body(s, e) -> (s + e, (s + e) * 2): a running sum over the elements of x
// along `axis` (reversed when asked), the state's final value and each step's doubled sum,
// stacked along `out_axis` (reversed when asked). s0 has x's shape without the axis.
OnnxBuilder running_sum_scan(int64_t axis, bool reverse_in, int64_t out_axis, bool reverse_out) {
  const std::vector<int64_t> element = axis == 0 ? std::vector<int64_t>{3} : std::vector<int64_t>{2};
  const int64_t steps = axis == 0 ? 2 : 3;
  OnnxBuilder b(kOpset);
  b.input("x", DType::kF32, {2, 3});
  b.initializer_f32("s0", element, std::vector<float>(static_cast<size_t>(element[0]), 10.0f));
  const std::vector<int64_t> stacked =
      out_axis == 0 ? std::vector<int64_t>{steps, element[0]}
                    : std::vector<int64_t>{element[0], steps};
  b.output("s", DType::kF32, element).output("sums", DType::kF32, stacked);
  OnnxBuilder body = branch("body");
  body.input("s_in", DType::kF32, element).input("e", DType::kF32, element);
  body.output("s_out", DType::kF32, element).output("doubled", DType::kF32, element);
  body.initializer_f32("two", {}, {2.0f});
  body.node("Add", {"s_in", "e"}, {"s_out"}, "add");
  body.node("Mul", {"s_out", "two"}, {"doubled"}, "double");
  onnx::NodeProto& scan = b.node("Scan", {"s0", "x"}, {"s", "sums"}, "scan");
  set_attr(scan, "num_scan_inputs", int64_t{1});
  set_attr(scan, "scan_input_axes", std::vector<int64_t>{axis});
  set_attr(scan, "scan_input_directions", std::vector<int64_t>{reverse_in ? 1 : 0});
  set_attr(scan, "scan_output_axes", std::vector<int64_t>{out_axis});
  set_attr(scan, "scan_output_directions", std::vector<int64_t>{reverse_out ? 1 : 0});
  set_branch(scan, "body", body);
  return b;
}

std::vector<std::vector<float>> run_scan(OnnxBuilder& b) {
  auto graph = import(b);
  EXPECT_TRUE(graph.is_ok()) << graph.status().message();
  if (!graph.is_ok()) return {};
  EXPECT_FALSE(has_op(*graph, "Scan"));
  auto program = cpu::CpuProgram::compile(*graph, {});
  EXPECT_TRUE(program.is_ok()) << program.status().message();
  if (!program.is_ok()) return {};
  auto outputs = (*program)->run({Tensor::from_vector(DType::kF32, {2, 3}, kX)});
  EXPECT_TRUE(outputs.is_ok()) << outputs.status().message();
  if (!outputs.is_ok()) return {};
  std::vector<std::vector<float>> values;
  for (const Tensor& t : *outputs) {
    values.emplace_back(t.values<float>().begin(), t.values<float>().end());
  }
  return values;
}

TEST(ScanTest, RunningSumOverRowsUnrollsAndRuns) {
  OnnxBuilder b = running_sum_scan(0, false, 0, false);
  // x = [[1, -2, 3], [-4, 5, -6]]: sums 11 8 13, then 7 13 7.
  const auto out = run_scan(b);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (std::vector<float>{7, 13, 7}));
  EXPECT_EQ(out[1], (std::vector<float>{22, 16, 26, 14, 26, 14}));
}

TEST(ScanTest, ReversedColumnsStackedAlongAxisOneReversed) {
  OnnxBuilder b = running_sum_scan(1, true, 1, true);
  // Columns from the last: (3, -6), (-2, 5), (1, -4); sums (13, 4), (11, 9), (12, 5).
  // Stacked along axis 1 in reverse step order: [[24, 22, 26], [10, 18, 8]].
  const auto out = run_scan(b);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (std::vector<float>{12, 5}));
  EXPECT_EQ(out[1], (std::vector<float>{24, 22, 26, 10, 18, 8}));
}

TEST(ScanTest, NegativeAxesCountFromTheBack) {
  OnnxBuilder b = running_sum_scan(-1, true, -1, true);
  const auto out = run_scan(b);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1], (std::vector<float>{24, 22, 26, 10, 18, 8}));
}

// Replaces the attribute `name` of the first node of `b` by `value`.
template <typename T>
void replace_attr(OnnxBuilder& b, const std::string& name, const T& value) {
  onnx::NodeProto& node = *b.model().mutable_graph()->mutable_node(0);
  auto& attributes = *node.mutable_attribute();
  attributes.erase(std::remove_if(attributes.begin(), attributes.end(),
                                  [&](const onnx::AttributeProto& a) { return a.name() == name; }),
                   attributes.end());
  set_attr(node, name, value);
}

TEST(ScanTest, BadAttributesAndUnknownLengthsAreOneLine) {
  const auto refused = [](OnnxBuilder& b, const std::string& expected) {
    const Status status = import(b).status();
    EXPECT_FALSE(status.is_ok());
    EXPECT_NE(status.message().find(expected), std::string::npos) << status.message();
    EXPECT_EQ(status.message().find('\n'), std::string::npos);
  };
  OnnxBuilder axis = running_sum_scan(0, false, 0, false);
  replace_attr(axis, "scan_input_axes", std::vector<int64_t>{2});
  refused(axis, "node 'scan' (Scan): scan_input_axes holds 2 for an input of rank 2");
  OnnxBuilder direction = running_sum_scan(0, false, 0, false);
  replace_attr(direction, "scan_output_directions", std::vector<int64_t>{2});
  refused(direction, "scan_output_directions holds 2 (0 forward, 1 reverse)");
  OnnxBuilder count = running_sum_scan(0, false, 0, false);
  replace_attr(count, "num_scan_inputs", int64_t{3});
  refused(count, "num_scan_inputs must be in [1, 2]");
  // x of a length known only at run time.
  OnnxBuilder dynamic = running_sum_scan(0, false, 0, false);
  auto* dim = dynamic.model().mutable_graph()->mutable_input(0)->mutable_type()
                  ->mutable_tensor_type()->mutable_shape()->mutable_dim(0);
  dim->set_dim_param("n");
  refused(dynamic, "node 'scan' (Scan): hsched runs a Scan by unrolling it, which needs the length "
                   "of its scan inputs known at load time");
}

// Loop(trips, cond, x) over body(i, c, acc) -> (c', acc + x, (acc + x) * i): after 3 trips
// acc = 4x and the scan output stacks 0, 3x and 8x.
OnnxBuilder counting_loop(bool trips_as_input, const std::string& condition_out) {
  OnnxBuilder b(kOpset);
  b.input("x", DType::kF32, {2, 3});
  if (trips_as_input) {
    b.input("trips", DType::kI64, {});
  } else {
    b.initializer_i64("trips", {}, {3});
  }
  b.output("acc", DType::kF32, {2, 3}).output("rows", DType::kF32, {3, 2, 3});
  OnnxBuilder body = branch("body");
  body.input("i", DType::kI64, {})
      .input("c", DType::kBool, {})
      .input("acc_in", DType::kF32, {2, 3});
  body.output(condition_out, DType::kBool, {})
      .output("acc_out", DType::kF32, {2, 3})
      .output("row", DType::kF32, {2, 3});
  if (condition_out == "c_out") body.node("Identity", {"c"}, {"c_out"}, "keep_going");
  if (condition_out == "small") {  // a while loop: sum(acc) < 100
    body.node("ReduceSum", {"acc_out"}, {"total"}, "total");
    body.initializer_f32("limit", {}, {100.0f});
    body.node("Less", {"total", "limit"}, {"small"}, "small");
  }
  body.initializer_f32("one", {}, {1.0f});  // shared by every trip once unrolled
  body.node("Mul", {"x", "one"}, {"x1"}, "times_one");
  body.node("Add", {"acc_in", "x1"}, {"acc_out"}, "add");
  set_attr(body.node("Cast", {"i"}, {"i_f"}, "cast"), "to", int64_t{1});
  body.node("Mul", {"acc_out", "i_f"}, {"row"}, "scale");
  set_branch(b.node("Loop", {"trips", "", "x"}, {"acc", "rows"}, "loop"), "body", body);
  return b;
}

TEST(LoopTest, ConstantTripCountUnrollsAndRuns) {
  OnnxBuilder b = counting_loop(false, "c_out");
  auto graph = import(b);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_FALSE(has_op(*graph, "Loop"));
  const auto& nodes = graph->nodes();
  EXPECT_TRUE(std::any_of(nodes.begin(), nodes.end(),
                          [](const Node& node) { return node.name == "loop/iter2/add"; }));
  EXPECT_EQ(graph->value(graph->outputs().at(1)).shape.dims, (std::vector<int64_t>{3, 2, 3}));
  auto program = cpu::CpuProgram::compile(*graph, {});
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  auto outputs = (*program)->run({Tensor::from_vector(DType::kF32, {2, 3}, kX)});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  const auto acc = outputs->at(0).values<float>();
  EXPECT_EQ(std::vector<float>(acc.begin(), acc.end()), map_x([](float v) { return 4 * v; }));
  std::vector<float> rows(6, 0.0f);
  for (float v : kX) rows.push_back(3 * v);
  for (float v : kX) rows.push_back(8 * v);
  const auto got = outputs->at(1).values<float>();
  EXPECT_EQ(std::vector<float>(got.begin(), got.end()), rows);
}

TEST(LoopTest, RunTimeTripCountOrEarlyExitIsRefused) {
  for (const bool while_loop : {false, true}) {
    OnnxBuilder b = counting_loop(!while_loop, while_loop ? "small" : "c_out");
    const Status status = import(b).status();
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(status.message(),
              "if.onnx: node 'loop' (Loop): hsched runs a Loop by unrolling it, which needs a trip "
              "count known at load time (at most 4096) and a condition that never ends it early")
        << while_loop;
  }
}

TEST(LoopTest, BodyOfTheWrongArityIsRefused) {
  OnnxBuilder b(kOpset);
  b.input("x", DType::kF32, {2, 3}).output("y", DType::kF32, {2, 3});
  b.initializer_i64("trips", {}, {2});
  OnnxBuilder body = branch("body");
  body.input("i", DType::kI64, {}).input("c", DType::kBool, {});
  body.output("c_out", DType::kBool, {}).output("acc_out", DType::kF32, {2, 3});
  body.node("Identity", {"c"}, {"c_out"});
  body.node("Identity", {"x"}, {"acc_out"});
  set_branch(b.node("Loop", {"trips", "", "x"}, {"y"}, "loop"), "body", body);
  const Status status = import(b).status();
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(status.message().find("attribute 'body' declares 2 inputs; it takes 3"),
            std::string::npos)
      << status.message();
}

TEST(IfTest, BranchReadingAnUndefinedNameIsRefused) {
  OnnxBuilder b(kOpset);
  b.input("x", DType::kF32, {2, 3}).output("y", DType::kF32, {2, 3});
  add_bool_initializer(*b.model().mutable_graph(), "cond", true);
  OnnxBuilder then_branch = branch("then");
  then_branch.output("s", DType::kF32, {2, 3});
  then_branch.node("Add", {"x", "nowhere"}, {"s"}, "add");
  OnnxBuilder else_branch = branch("else");
  else_branch.output("x", DType::kF32, {2, 3});
  add_if(b, "cond", "y", then_branch, else_branch);
  const Status status = import(b).status();
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(status.message().find("node 'if' (If): attribute 'then_branch': node 'add' (Add): "
                                  "input 'nowhere' is produced by no node"),
            std::string::npos)
      << status.message();
}

// Malformed branches: each refused with InvalidArgument and one line naming the If.
TEST(IfTest, MalformedBranchesAreRefused) {
  struct Case {
    std::string name;
    std::function<void(OnnxBuilder&)> spoil;  // applied to a valid then_branch
    std::string expect;
  };
  const std::vector<Case> cases{
      {"ExtraOutput",
       [](OnnxBuilder& then_branch) {
         then_branch.output("x", DType::kF32, {2, 3});
       },
       "attribute 'then_branch' has 2 outputs; the If has 1"},
      {"Inputs", [](OnnxBuilder& then_branch) { then_branch.input("q", DType::kF32, {1}); },
       "attribute 'then_branch' declares 1 inputs; an If branch takes none"},
      {"RedefinesAnOuterName",
       [](OnnxBuilder& then_branch) { then_branch.node("Relu", {"x"}, {"cond"}, "relu"); },
       "tensor 'cond' is defined twice"},
      {"Cycle",
       [](OnnxBuilder& then_branch) {
         then_branch.node("Relu", {"b"}, {"a"}, "ra");
         then_branch.node("Relu", {"a"}, {"b"}, "rb");
       },
       "graph has a cycle"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    OnnxBuilder b(kOpset);
    b.input("x", DType::kF32, {2, 3}).output("y", DType::kF32, {2, 3});
    add_bool_initializer(*b.model().mutable_graph(), "cond", true);
    OnnxBuilder then_branch = branch("then");
    then_branch.output("s", DType::kF32, {2, 3});
    then_branch.node("Neg", {"x"}, {"s"}, "neg");
    c.spoil(then_branch);
    OnnxBuilder else_branch = branch("else");
    else_branch.output("x", DType::kF32, {2, 3});
    add_if(b, "cond", "y", then_branch, else_branch);
    const Status status = import(b).status();
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(status.message().find("node 'if' (If)"), std::string::npos) << status.message();
    EXPECT_NE(status.message().find(c.expect), std::string::npos) << status.message();
    EXPECT_EQ(status.message().find('\n'), std::string::npos);
  }
}

TEST(IfTest, NestingDepthIsBounded) {
  // Five Ifs, each in both branches of the one around it: branches 5 deep, one over the bound.
  OnnxBuilder innermost = branch("b5");
  innermost.output("x", DType::kF32, {2, 3});
  for (int level = 4; level >= 0; --level) {
    OnnxBuilder wrapper = level == 0 ? OnnxBuilder(kOpset) : branch("b" + std::to_string(level));
    if (level == 0) wrapper.input("x", DType::kF32, {2, 3});
    wrapper.output("y" + std::to_string(level), DType::kF32, {2, 3});
    add_bool_initializer(*wrapper.model().mutable_graph(), "c" + std::to_string(level), true);
    add_if(wrapper, "c" + std::to_string(level), "y" + std::to_string(level), innermost, innermost,
           "if" + std::to_string(level));
    innermost = wrapper;
  }
  const Status status = import(innermost).status();
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(status.message().find("nest deeper than 4 levels"), std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace hsched
