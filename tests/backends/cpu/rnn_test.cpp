// LSTM, GRU and RNN against a plain reference written from ONNX's operator equations (double
// precision): both layouts, all three directions, optional inputs and outputs, sequence_lens,
// clip and other activations (the loop kernels), and malformed nodes refused at creation.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include <gtest/gtest.h>

#include "backends/cpu/program.h"
#include "graph/cost.h"
#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "op_test_util.h"

namespace hsched::cpu {
namespace {

using test::OpInput;
using test::OpOutput;
using test::random_f32;

struct RnnCase {
  std::string op;  // "LSTM", "GRU", "RNN"
  int64_t T = 3, N = 2, I = 4, H = 5;
  std::string direction = "forward";
  int64_t layout = 0;
  bool bias = true, initial = true, peephole = false;
  int64_t linear_before_reset = 0;
  std::vector<std::string> activations;  // empty: the defaults
  std::vector<float> alpha, beta;
  std::optional<float> clip;
  std::vector<int32_t> lens;  // empty: no sequence_lens
  bool constant_weights = true, constant_lens = true;
  bool want_y = true, want_y_h = true, want_y_c = true;

  int64_t dirs() const { return direction == "bidirectional" ? 2 : 1; }
  int64_t gates() const { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }
  std::vector<int64_t> x_dims() const {
    return layout ? std::vector<int64_t>{N, T, I} : std::vector<int64_t>{T, N, I};
  }
  std::vector<int64_t> y_dims() const {
    return layout ? std::vector<int64_t>{N, T, dirs(), H} : std::vector<int64_t>{T, dirs(), N, H};
  }
  std::vector<int64_t> state_dims() const {
    return layout ? std::vector<int64_t>{N, dirs(), H} : std::vector<int64_t>{dirs(), N, H};
  }
};

struct RnnTensors {
  Tensor x, w, r, b, lens, h0, c0, p;
};

RnnTensors make_tensors(const RnnCase& k) {
  const int64_t D = k.dirs(), GH = k.gates() * k.H;
  RnnTensors t;
  t.x = random_f32(k.x_dims(), 1);
  t.w = random_f32({D, GH, k.I}, 2, -0.6f, 0.6f);
  t.r = random_f32({D, GH, k.H}, 3, -0.6f, 0.6f);
  t.b = random_f32({D, 2 * GH}, 4, -0.5f, 0.5f);
  t.h0 = random_f32(k.state_dims(), 5);
  t.c0 = random_f32(k.state_dims(), 6);
  t.p = random_f32({D, 3 * k.H}, 7);
  if (!k.lens.empty()) {
    t.lens = Tensor::from_vector(DType::kI32, {k.N}, k.lens);
  }
  return t;
}

// ONNX's activation functions by name, alpha and beta taken in order by those that use them.
struct RefActivation {
  std::string name;
  double alpha = 0, beta = 0;
  double operator()(double v) const {
    if (name == "sigmoid") return 1.0 / (1.0 + std::exp(-v));
    if (name == "tanh") return std::tanh(v);
    if (name == "relu") return std::max(v, 0.0);
    if (name == "hardsigmoid") return std::clamp(alpha * v + beta, 0.0, 1.0);
    if (name == "leakyrelu") return v >= 0 ? v : alpha * v;
    if (name == "affine") return alpha * v + beta;
    ADD_FAILURE() << "reference lacks " << name;
    return 0;
  }
};

std::vector<RefActivation> ref_activations(const RnnCase& k, int64_t d) {
  std::vector<std::string> names = k.activations;
  const size_t per_dir = k.op == "LSTM" ? 3 : k.op == "GRU" ? 2 : 1;
  if (names.empty()) {
    names = k.op == "LSTM"  ? std::vector<std::string>{"sigmoid", "tanh", "tanh"}
            : k.op == "GRU" ? std::vector<std::string>{"sigmoid", "tanh"}
                            : std::vector<std::string>{"tanh"};
    if (k.dirs() == 2) {
      const std::vector<std::string> one = names;
      names.insert(names.end(), one.begin(), one.end());
    }
  }
  std::vector<RefActivation> all;
  size_t a = 0, b = 0;
  for (std::string n : names) {
    for (char& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    RefActivation act{n};
    if (n == "hardsigmoid" || n == "leakyrelu" || n == "affine") act.alpha = k.alpha.at(a++);
    if (n == "hardsigmoid" || n == "affine") act.beta = k.beta.at(b++);
    all.push_back(act);
  }
  if (all.size() == per_dir) return all;  // one set for both directions, parameters included
  return {all.begin() + static_cast<int64_t>(per_dir) * d,
          all.begin() + static_cast<int64_t>(per_dir) * (d + 1)};
}

// Y, Y_h, Y_c from ONNX's equations, one (direction, batch row) at a time.
std::vector<Tensor> reference(const RnnCase& k, const RnnTensors& t) {
  const int64_t T = k.T, N = k.N, I = k.I, H = k.H, D = k.dirs(), GH = k.gates() * H;
  Tensor y(DType::kF32, k.y_dims()), y_h(DType::kF32, k.state_dims()),
      y_c(DType::kF32, k.state_dims());
  const auto X = t.x.values<float>();
  const auto W = t.w.values<float>();
  const auto R = t.r.values<float>();
  const auto B = t.b.values<float>();
  const auto P = t.p.values<float>();
  const auto state_at = [&](int64_t d, int64_t n) {
    return (k.layout ? n * D + d : d * N + n) * H;
  };
  for (int64_t d = 0; d < D; ++d) {
    const auto act = ref_activations(k, d);
    const auto f = [&](size_t i, double v) {
      if (k.clip) v = std::clamp(v, -double{*k.clip}, double{*k.clip});
      return act[i](v);
    };
    const bool backwards = k.direction == "reverse" || d == 1;
    for (int64_t n = 0; n < N; ++n) {
      const int64_t len = k.lens.empty() ? T : k.lens[static_cast<size_t>(n)];
      std::vector<double> h(H, 0.0), c(H, 0.0);
      for (int64_t j = 0; j < H; ++j) {
        if (k.initial) h[j] = t.h0.values<float>()[state_at(d, n) + j];
        if (k.initial && k.op == "LSTM") c[j] = t.c0.values<float>()[state_at(d, n) + j];
      }
      for (int64_t s = 0; s < len; ++s) {
        const int64_t step = backwards ? len - 1 - s : s;
        const float* x = X.data() + (k.layout ? n * T + step : step * N + n) * I;
        // Xt*W^T + Wb and Ht-1*R^T + Rb of row `row` of direction d's gate blocks.
        const auto xw = [&](int64_t row) {
          double acc = k.bias ? B[d * 2 * GH + row] : 0.0;
          for (int64_t i = 0; i < I; ++i) acc += x[i] * double{W[(d * GH + row) * I + i]};
          return acc;
        };
        const auto hr = [&](int64_t row, const std::vector<double>& state) {
          double acc = k.bias ? B[d * 2 * GH + GH + row] : 0.0;
          for (int64_t m = 0; m < H; ++m) acc += state[m] * double{R[(d * GH + row) * H + m]};
          return acc;
        };
        std::vector<double> next(H), next_c = c;
        if (k.op == "RNN") {
          for (int64_t j = 0; j < H; ++j) next[j] = f(0, xw(j) + hr(j, h));
        } else if (k.op == "GRU") {
          std::vector<double> z(H), r(H), rh(H);
          for (int64_t j = 0; j < H; ++j) {
            z[j] = f(0, xw(j) + hr(j, h));
            r[j] = f(0, xw(H + j) + hr(H + j, h));
            rh[j] = r[j] * h[j];
          }
          for (int64_t j = 0; j < H; ++j) {
            const double ht = k.linear_before_reset ? f(1, xw(2 * H + j) + r[j] * hr(2 * H + j, h))
                                                    : f(1, xw(2 * H + j) + hr(2 * H + j, rh));
            next[j] = (1 - z[j]) * ht + z[j] * h[j];
          }
        } else {  // LSTM: blocks i o f c, P blocks i o f
          const auto p = [&](int64_t block, int64_t j) {
            return k.peephole ? double{P[d * 3 * H + block * H + j]} : 0.0;
          };
          for (int64_t j = 0; j < H; ++j) {
            const double it = f(0, xw(j) + hr(j, h) + p(0, j) * c[j]);
            const double ft = f(0, xw(2 * H + j) + hr(2 * H + j, h) + p(2, j) * c[j]);
            const double ct = f(1, xw(3 * H + j) + hr(3 * H + j, h));
            next_c[j] = ft * c[j] + it * ct;
            const double ot = f(0, xw(H + j) + hr(H + j, h) + p(1, j) * next_c[j]);
            next[j] = ot * f(2, next_c[j]);
          }
        }
        h = next;
        c = next_c;
        for (int64_t j = 0; j < H; ++j) {
          const int64_t at = (k.layout ? (n * T + step) * D + d : (step * D + d) * N + n) * H + j;
          y.values<float>()[at] = static_cast<float>(h[j]);
        }
      }
      for (int64_t j = 0; j < H; ++j) {
        y_h.values<float>()[state_at(d, n) + j] = len ? static_cast<float>(h[j]) : 0.0f;
        y_c.values<float>()[state_at(d, n) + j] = len ? static_cast<float>(c[j]) : 0.0f;
      }
    }
  }
  return {y, y_h, y_c};
}

AttributeMap attributes_of(const RnnCase& k) {
  AttributeMap attrs{{"hidden_size", k.H}, {"direction", k.direction}, {"layout", k.layout}};
  if (k.op == "GRU") attrs["linear_before_reset"] = k.linear_before_reset;
  if (!k.activations.empty()) attrs["activations"] = k.activations;
  if (!k.alpha.empty()) attrs["activation_alpha"] = k.alpha;
  if (!k.beta.empty()) attrs["activation_beta"] = k.beta;
  if (k.clip) attrs["clip"] = *k.clip;
  return attrs;
}

Result<std::vector<Tensor>> run_case(const RnnCase& k, const RnnTensors& t,
                                     const AttributeMap& attrs) {
  const bool cw = k.constant_weights;
  std::vector<OpInput> inputs{{t.x},
                              {t.w, cw},
                              {t.r, cw},
                              {t.b, cw, !k.bias},
                              {t.lens, k.constant_lens, k.lens.empty()},
                              {t.h0, false, !k.initial}};
  if (k.op == "LSTM") {
    inputs.push_back({t.c0, false, !k.initial});
    inputs.push_back({t.p, cw, !k.peephole});
  }
  std::vector<OpOutput> outputs{{DType::kF32, k.y_dims(), !k.want_y},
                                {DType::kF32, k.state_dims(), !k.want_y_h}};
  if (k.op == "LSTM") outputs.push_back({DType::kF32, k.state_dims(), !k.want_y_c});
  return test::run_op(k.op, attrs, inputs, outputs, 14);
}

class RnnTest : public ::testing::TestWithParam<RnnCase> {};

TEST_P(RnnTest, MatchesOnnxEquations) {
  const RnnCase k = GetParam();
  const RnnTensors t = make_tensors(k);
  auto got = run_case(k, t, attributes_of(k));
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  const auto want = reference(k, t);
  if (k.want_y) {
    EXPECT_TRUE(test::all_close(got->at(0), want[0], 1e-5, 1e-4)) << "Y";
  }
  if (k.want_y_h) {
    EXPECT_TRUE(test::all_close(got->at(1), want[1], 1e-5, 1e-4)) << "Y_h";
  }
  if (k.op == "LSTM" && k.want_y_c) {
    EXPECT_TRUE(test::all_close(got->at(2), want[2], 1e-5, 1e-4)) << "Y_c";
  }
}

RnnCase with(RnnCase k, const std::function<void(RnnCase&)>& edit) {
  edit(k);
  return k;
}

RnnCase of_op(const std::string& op) {
  RnnCase k;
  k.op = op;
  return k;
}

const RnnCase kLstm = of_op("LSTM");
const RnnCase kGru = of_op("GRU");
const RnnCase kRnn = of_op("RNN");

INSTANTIATE_TEST_SUITE_P(
    Lstm, RnnTest,
    ::testing::Values(kLstm, with(kLstm, [](RnnCase& k) { k.peephole = true; }),
                      with(kLstm,
                           [](RnnCase& k) {
                             k.peephole = true;
                             k.constant_weights = false;
                           }),
                      with(kLstm,
                           [](RnnCase& k) {
                             k.direction = "reverse";
                             k.bias = false;
                             k.initial = false;
                           }),
                      with(kLstm,
                           [](RnnCase& k) {
                             k.direction = "bidirectional";
                             k.peephole = true;
                           }),
                      with(kLstm,
                           [](RnnCase& k) {
                             k.direction = "bidirectional";
                             k.layout = 1;
                             k.peephole = true;
                           }),
                      with(kLstm,
                           [](RnnCase& k) {
                             k.layout = 1;
                             k.want_y = false;
                             k.want_y_c = false;
                           }),
                      with(kLstm,
                           [](RnnCase& k) {
                             k.want_y_h = false;
                             k.want_y_c = false;
                           }),
                      // The loops: clip, uneven lengths (constant and not), other activations.
                      with(kLstm,
                           [](RnnCase& k) {
                             k.clip = 0.4f;
                             k.peephole = true;
                             k.direction = "bidirectional";
                           }),
                      with(kLstm,
                           [](RnnCase& k) {
                             k.lens = {3, 1};
                             k.direction = "bidirectional";
                           }),
                      with(kLstm,
                           [](RnnCase& k) {
                             k.lens = {0, 2};
                             k.constant_lens = false;
                             k.layout = 1;
                           }),
                      with(kLstm, [](RnnCase& k) {
                        k.activations = {"HardSigmoid", "Tanh", "Affine"};
                        k.alpha = {0.3f, 0.7f};
                        k.beta = {0.45f, 0.1f};
                      })));

INSTANTIATE_TEST_SUITE_P(
    Gru, RnnTest,
    ::testing::Values(kGru, with(kGru, [](RnnCase& k) { k.linear_before_reset = 1; }),
                      with(kGru,
                           [](RnnCase& k) {
                             k.direction = "bidirectional";
                             k.constant_weights = false;
                           }),
                      with(kGru,
                           [](RnnCase& k) {
                             k.direction = "bidirectional";
                             k.layout = 1;
                             k.linear_before_reset = 1;
                           }),
                      with(kGru,
                           [](RnnCase& k) {
                             k.direction = "reverse";
                             k.initial = false;
                             k.want_y = false;
                           }),
                      with(kGru,
                           [](RnnCase& k) {
                             k.lens = {2, 3};
                             k.constant_lens = false;
                           }),
                      with(kGru,
                           [](RnnCase& k) {
                             k.lens = {3, 3};
                             k.constant_lens = false;
                             k.layout = 1;
                           }),
                      with(kGru,
                           [](RnnCase& k) {
                             k.activations = {"HardSigmoid", "LeakyRelu"};
                             k.alpha = {0.3f, 0.2f};
                             k.beta = {0.6f};
                             k.clip = 1.5f;
                           }),
                      // One set of activations for both directions: its alpha and beta too.
                      with(kGru, [](RnnCase& k) {
                        k.activations = {"HardSigmoid", "LeakyRelu"};
                        k.alpha = {0.3f, 0.2f};
                        k.beta = {0.6f};
                        k.direction = "bidirectional";
                      })));

INSTANTIATE_TEST_SUITE_P(Rnn, RnnTest,
                         ::testing::Values(kRnn,
                                           with(kRnn,
                                                [](RnnCase& k) {
                                                  k.bias = false;
                                                  k.initial = false;
                                                }),
                                           with(kRnn,
                                                [](RnnCase& k) {
                                                  k.activations = {"Relu"};
                                                  k.direction = "reverse";
                                                }),
                                           with(kRnn,
                                                [](RnnCase& k) {
                                                  k.activations = {"Sigmoid", "Sigmoid"};
                                                  k.direction = "bidirectional";
                                                  k.layout = 1;
                                                }),
                                           with(kRnn,
                                                [](RnnCase& k) {
                                                  k.activations = {"Tanh", "Relu"};
                                                  k.direction = "bidirectional";
                                                }),
                                           with(kRnn, [](RnnCase& k) {
                                             k.lens = {1, 3};
                                             k.direction = "bidirectional";
                                             k.layout = 1;
                                           })));

// A malformed node is refused when its kernel is created, with one line naming the node.
void expect_refused(const RnnCase& k, const RnnTensors& t, const AttributeMap& attrs,
                    ErrorCode code, const std::string& words) {
  auto got = run_case(k, t, attrs);
  ASSERT_FALSE(got.is_ok());
  EXPECT_EQ(got.status().code(), code) << got.status().message();
  EXPECT_NE(got.status().message().find(words), std::string::npos) << got.status().message();
  EXPECT_NE(got.status().message().find("(" + k.op + ")"), std::string::npos);
  EXPECT_EQ(got.status().message().find('\n'), std::string::npos);
}

TEST(RnnMalformed, ShapesAndAttributesAreChecked) {
  const RnnTensors good = make_tensors(kLstm);
  RnnTensors t = good;
  t.w = random_f32({1, 4 * kLstm.H, kLstm.I + 1}, 2);
  expect_refused(kLstm, t, attributes_of(kLstm), ErrorCode::kInvalidArgument, "W has shape");
  t = good;
  t.r = random_f32({1, 4 * kLstm.H, kLstm.H - 1}, 3);
  expect_refused(kLstm, t, attributes_of(kLstm), ErrorCode::kInvalidArgument, "R has shape");
  t = good;
  t.b = random_f32({1, 4 * kLstm.H}, 4);
  expect_refused(kLstm, t, attributes_of(kLstm), ErrorCode::kInvalidArgument, "B has shape");
  t = good;
  t.p = random_f32({1, 2 * kLstm.H}, 4);
  expect_refused(with(kLstm, [](RnnCase& k) { k.peephole = true; }), t, attributes_of(kLstm),
                 ErrorCode::kInvalidArgument, "P has shape");
  t = good;
  t.h0 = random_f32({2, kLstm.N, kLstm.H}, 5);
  expect_refused(kLstm, t, attributes_of(kLstm), ErrorCode::kInvalidArgument, "initial_h");
  t = good;
  t.x = random_f32({kLstm.T * kLstm.N, kLstm.I}, 1);
  expect_refused(kLstm, t, attributes_of(kLstm), ErrorCode::kInvalidArgument, "rank 3");

  AttributeMap attrs = attributes_of(kLstm);
  attrs["hidden_size"] = int64_t{4};
  expect_refused(kLstm, good, attrs, ErrorCode::kInvalidArgument, "W has shape");
  attrs = attributes_of(kLstm);
  attrs["direction"] = std::string("sideways");
  expect_refused(kLstm, good, attrs, ErrorCode::kInvalidArgument, "direction");
  // A bidirectional node with one direction's weights.
  attrs["direction"] = std::string("bidirectional");
  expect_refused(kLstm, good, attrs, ErrorCode::kInvalidArgument, "has shape");
  attrs = attributes_of(kLstm);
  attrs["input_forget"] = int64_t{1};
  expect_refused(kLstm, good, attrs, ErrorCode::kUnimplemented, "input_forget");
  attrs = attributes_of(kLstm);
  attrs["activations"] = std::vector<std::string>{"Sigmoid", "Gelu", "Tanh"};
  expect_refused(kLstm, good, attrs, ErrorCode::kUnimplemented, "Gelu");
  attrs["activations"] = std::vector<std::string>{"Sigmoid", "Tanh"};
  expect_refused(kLstm, good, attrs, ErrorCode::kInvalidArgument, "activations");
}

// LSTM-1, GRU-1/3 and RNN-1 have other semantics: refused, not run as opset 7.
TEST(RnnMalformed, OpsetsBefore7AreRefused) {
  for (const RnnCase& k : {kLstm, kGru, kRnn}) {
    const RnnTensors t = make_tensors(k);
    std::vector<OpInput> inputs{{t.x}, {t.w, true}, {t.r, true}};
    auto got = test::run_op(k.op, {{"hidden_size", k.H}}, inputs,
                            {{DType::kF32, k.y_dims()}, {DType::kF32, k.state_dims()}},
                            k.op == "GRU" ? 3 : 1);
    ASSERT_FALSE(got.is_ok()) << k.op;
    EXPECT_EQ(got.status().code(), ErrorCode::kUnimplemented) << got.status().message();
    EXPECT_NE(got.status().message().find("opset"), std::string::npos) << got.status().message();
  }
}

TEST(RnnMalformed, SequenceLengthsOutOfRange) {
  const RnnCase k = with(kGru, [](RnnCase& c) { c.lens = {1, 4}; });
  const RnnTensors t = make_tensors(k);
  expect_refused(k, t, attributes_of(k), ErrorCode::kInvalidArgument, "sequence_lens");
  // Not a constant: the run fails instead, with the same words.
  const RnnCase runtime = with(k, [](RnnCase& c) { c.constant_lens = false; });
  auto got = run_case(runtime, t, attributes_of(runtime));
  ASSERT_FALSE(got.is_ok());
  EXPECT_NE(got.status().message().find("sequence_lens"), std::string::npos);
  const RnnCase negative = with(runtime, [](RnnCase& c) { c.lens = {-1, 2}; });
  EXPECT_FALSE(run_case(negative, make_tensors(negative), attributes_of(negative)).is_ok());
}

// A model whose LSTM omits Y (only Y_h is wanted) runs as a CPU program: the importer leaves Y
// omitted and the kernel computes no Y; Y_h matches the reference. Once with X computed at run
// time (after Tanh and Add, as a node's result), once with every input constant (folded when the
// program is compiled).
TEST(RnnProgram, LstmWithYOmittedRunsAndMatchesTheReference) {
  const RnnCase k = with(kLstm, [](RnnCase& c) {
    c.bias = false;
    c.initial = false;
  });
  const RnnTensors t = make_tensors(k);
  const auto values = [](const Tensor& v) {
    const auto s = v.values<float>();
    return std::vector<float>(s.begin(), s.end());
  };
  for (bool constant_x : {false, true}) {
    OnnxBuilder b(14);
    if (constant_x) {
      b.initializer_f32("x2", k.x_dims(), values(t.x));
    } else {
      b.input("x", DType::kF32, k.x_dims());
      b.initializer_f32("zero", {1}, {0.0f});
      b.node("Identity", {"x"}, {"x1"});
      b.node("Add", {"x1", "zero"}, {"x2"});
    }
    b.output("y_h", DType::kF32, k.state_dims());
    b.initializer_f32("w", {1, 4 * k.H, k.I}, values(t.w));
    b.initializer_f32("r", {1, 4 * k.H, k.H}, values(t.r));
    set_attr(b.node("LSTM", {"x2", "w", "r"}, {"", "y_h"}, "lstm"), "hidden_size", k.H);
    auto graph = import_onnx_model(b.model(), {}, "lstm.onnx", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    auto program = CpuProgram::compile(*graph, CpuOptions{});
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    auto got = constant_x ? (*program)->run({}) : (*program)->run({t.x});
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    ASSERT_EQ(got->size(), 1u);
    EXPECT_TRUE(test::all_close(got->at(0), reference(k, t)[1], 1e-5, 1e-4)) << constant_x;
  }
}

TEST(RnnCost, FlopCountsBothMatrixProducts) {
  // X [T=3, N=2, I=4], W [1, 20, 4], R [1, 20, 5]: 2 * 6 * (80 + 100).
  Graph graph;
  const ValueId x = graph.add_value("x", DType::kF32, Shape({3, 2, 4}));
  const ValueId w = graph.add_value("w", DType::kF32, Shape({1, 20, 4}));
  const ValueId r = graph.add_value("r", DType::kF32, Shape({1, 20, 5}));
  const ValueId y = graph.add_value("y", DType::kF32, Shape({3, 1, 2, 5}));
  Node node;
  node.name = "lstm";
  node.op_type = "LSTM";
  node.inputs = {x, w, r};
  node.outputs = {y};
  const NodeCost cost = node_cost(graph, graph.add_node(std::move(node)));
  EXPECT_TRUE(cost.known);
  EXPECT_EQ(cost.flop, 2 * 6 * (80 + 100));
}

}  // namespace
}  // namespace hsched::cpu
