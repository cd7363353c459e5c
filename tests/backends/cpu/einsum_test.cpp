// Conformance of Einsum (einsum_kernels.cpp) in f32 against loops written out by hand for each
// equation, and the equations and shapes it must refuse.
#include <string>

#include "backends/cpu/op_test_util.h"

namespace hsched::cpu::test {
namespace {

Result<Tensor> einsum(const std::string& equation, const std::vector<Tensor>& inputs,
                      const std::vector<int64_t>& out_dims, DType dtype = DType::kF32) {
  std::vector<OpInput> in;
  for (const Tensor& t : inputs) in.push_back({t});
  HSCHED_ASSIGN_OR_RETURN(auto outs,
                          run_op("Einsum", {{"equation", equation}}, in, {{dtype, out_dims}}, 12));
  return std::move(outs[0]);
}

Tensor run(const std::string& equation, const std::vector<Tensor>& inputs,
           const std::vector<int64_t>& out_dims) {
  auto r = einsum(equation, inputs, out_dims);
  EXPECT_TRUE(r.is_ok()) << equation << ": " << r.status().message();
  return r.is_ok() ? std::move(r.value()) : Tensor(DType::kF32, out_dims);
}

float at(const Tensor& t, std::initializer_list<int64_t> index) {
  int64_t off = 0;
  size_t a = 0;
  for (int64_t i : index) off = off * t.dims()[a++] + i;
  return t.values<float>()[static_cast<size_t>(off)];
}

TEST(CpuEinsum, OnnxNodeTestEquations) {
  const Tensor x = random_f32({3, 4}, 1);
  // Transpose.
  Tensor want(DType::kF32, {4, 3});
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 4; ++j)
      want.values<float>()[static_cast<size_t>(j * 3 + i)] = at(x, {i, j});
  }
  EXPECT_TRUE(all_close(run("ij->ji", {x}, {4, 3}), want));
  EXPECT_TRUE(all_close(run("ba", {x}, {4, 3}), want));  // implicit: letters in ASCII order
  EXPECT_TRUE(all_close(run("aB", {x}, {4, 3}), want));  // upper case sorts first
  EXPECT_TRUE(all_close(run("Ba", {x}, {3, 4}), x));
  // Row sums.
  Tensor sums(DType::kF32, {3});
  for (int64_t i = 0; i < 3; ++i) {
    float s = 0;
    for (int64_t j = 0; j < 4; ++j) s += at(x, {i, j});
    sums.values<float>()[static_cast<size_t>(i)] = s;
  }
  EXPECT_TRUE(all_close(run("ij->i", {x}, {3}), sums));
  // Batched diagonal with spaces in the equation, as ONNX writes it.
  const Tensor b = random_f32({3, 5, 5}, 2);
  Tensor diag(DType::kF32, {3, 5});
  for (int64_t n = 0; n < 3; ++n) {
    for (int64_t i = 0; i < 5; ++i)
      diag.values<float>()[static_cast<size_t>(n * 5 + i)] = at(b, {n, i, i});
  }
  EXPECT_TRUE(all_close(run("...ii ->...i", {b}, {3, 5}), diag));
  // Inner product (implicit scalar output).
  const Tensor u = random_f32({5}, 3), v = random_f32({5}, 4);
  float dot = 0;
  for (int64_t i = 0; i < 5; ++i) dot += at(u, {i}) * at(v, {i});
  EXPECT_TRUE(all_close(run("i,i", {u, v}, {}), f32({}, {dot})));
  // Batched matmul.
  const Tensor p = random_f32({5, 2, 3}, 5), q = random_f32({5, 3, 4}, 6);
  Tensor mm(DType::kF32, {5, 2, 4});
  for (int64_t n = 0; n < 5; ++n) {
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t k = 0; k < 4; ++k) {
        float s = 0;
        for (int64_t j = 0; j < 3; ++j) s += at(p, {n, i, j}) * at(q, {n, j, k});
        mm.values<float>()[static_cast<size_t>((n * 2 + i) * 4 + k)] = s;
      }
    }
  }
  EXPECT_TRUE(all_close(run("bij, bjk -> bik", {p, q}, {5, 2, 4}), mm));
}

TEST(CpuEinsum, TracesOuterProductsBroadcastsAndThreeOperands) {
  const Tensor m = random_f32({4, 4}, 7);
  float trace = 0;
  for (int64_t i = 0; i < 4; ++i) trace += at(m, {i, i});
  EXPECT_TRUE(all_close(run("ii", {m}, {}), f32({}, {trace})));
  EXPECT_TRUE(all_close(run("ii->", {m}, {}), f32({}, {trace})));
  // Full sum.
  float total = 0;
  for (float e : m.values<float>()) total += e;
  EXPECT_TRUE(all_close(run("ij->", {m}, {}), f32({}, {total})));
  // Outer product.
  const Tensor u = random_f32({3}, 8), v = random_f32({2}, 9);
  Tensor outer(DType::kF32, {3, 2});
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 2; ++j)
      outer.values<float>()[static_cast<size_t>(i * 2 + j)] = at(u, {i}) * at(v, {j});
  }
  EXPECT_TRUE(all_close(run("i,j->ij", {u, v}, {3, 2}), outer));
  // '...' broadcast: [2, 1, 3, 4] x [5, 4, 6] -> [2, 5, 3, 6].
  const Tensor a = random_f32({2, 1, 3, 4}, 10), c = random_f32({5, 4, 6}, 11);
  Tensor bm(DType::kF32, {2, 5, 3, 6});
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t k = 0; k < 5; ++k) {
      for (int64_t i = 0; i < 3; ++i) {
        for (int64_t j = 0; j < 6; ++j) {
          float s = 0;
          for (int64_t r = 0; r < 4; ++r) s += at(a, {n, 0, i, r}) * at(c, {k, r, j});
          bm.values<float>()[static_cast<size_t>(((n * 5 + k) * 3 + i) * 6 + j)] = s;
        }
      }
    }
  }
  EXPECT_TRUE(all_close(run("...ir,...rj->...ij", {a, c}, {2, 5, 3, 6}), bm));
  EXPECT_TRUE(all_close(run("...ir,...rj", {a, c}, {2, 5, 3, 6}), bm));  // implicit
  // Three operands, one summed label shared by all: sum_j x_ij y_j z_jk.
  const Tensor x = random_f32({2, 3}, 12), y = random_f32({3}, 13), z = random_f32({3, 4}, 14);
  Tensor three(DType::kF32, {4, 2});
  for (int64_t k = 0; k < 4; ++k) {
    for (int64_t i = 0; i < 2; ++i) {
      float s = 0;
      for (int64_t j = 0; j < 3; ++j) s += at(x, {i, j}) * at(y, {j}) * at(z, {j, k});
      three.values<float>()[static_cast<size_t>(k * 2 + i)] = s;
    }
  }
  EXPECT_TRUE(all_close(run("ij,j,jk->ki", {x, y, z}, {4, 2}), three));
  // A size-1 label broadcasts, as in numpy: [3, 1] . [3, 4] over j.
  const Tensor col = random_f32({3, 1}, 15), full = random_f32({3, 4}, 16);
  Tensor rows(DType::kF32, {3});
  for (int64_t i = 0; i < 3; ++i) {
    float s = 0;
    for (int64_t j = 0; j < 4; ++j) s += at(col, {i, 0}) * at(full, {i, j});
    rows.values<float>()[static_cast<size_t>(i)] = s;
  }
  EXPECT_TRUE(all_close(run("ij,ij->i", {col, full}, {3}), rows));
  // Empty summed label: zeros; large output: parallel.
  EXPECT_TRUE(all_close(run("ij,jk->ik", {random_f32({2, 0}, 17), random_f32({0, 3}, 18)}, {2, 3}),
                        f32({2, 3}, std::vector<float>(6, 0))));
  const Tensor big_a = random_f32({96, 64}, 19), big_b = random_f32({64, 80}, 20);
  const Tensor big = run("ik,kj->ij", {big_a, big_b}, {96, 80});
  for (int64_t i : {0, 47, 95}) {
    for (int64_t j : {0, 33, 79}) {
      double s = 0;
      for (int64_t k = 0; k < 64; ++k) s += double(at(big_a, {i, k})) * at(big_b, {k, j});
      EXPECT_NEAR(at(big, {i, j}), s, 1e-4) << i << "," << j;
    }
  }
}

TEST(CpuEinsum, Float64KeepsDoublePrecision) {
  const Tensor a = Tensor::from_vector(DType::kF64, {2, 2}, std::vector<double>{1, 2, 3, 4});
  const Tensor b = Tensor::from_vector(DType::kF64, {2}, std::vector<double>{0.1, 1e-9});
  auto r = einsum("ij,j->i", {a, b}, {2}, DType::kF64);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  // 1e-9 next to 0.1 is lost in f32 (8 digits) and kept in f64.
  EXPECT_NEAR(r.value().values<double>()[0], 0.1 + 2e-9, 1e-15);
  EXPECT_NEAR(r.value().values<double>()[1], 0.3 + 4e-9, 1e-15);
}

TEST(CpuEinsum, RefusesMalformedEquationsAndShapes) {
  const Tensor m = random_f32({3, 4}, 21);
  auto code = [](const Result<Tensor>& r) {
    return r.is_ok() ? ErrorCode::kOk : r.status().code();
  };
  EXPECT_EQ(code(einsum("ij->ji", {m}, {4, 3})), ErrorCode::kOk);
  for (const std::string bad : {"i1->i", "ij->j->i", "ij,jk->ik", "ijk->i", "i->i", "ij->k",
                                "ij->ii", "i....j->ij", "......->", "ii->i"}) {
    const auto r = einsum(bad, {m}, {3});
    EXPECT_EQ(code(r), ErrorCode::kInvalidArgument) << bad;
    if (!r.is_ok()) {
      EXPECT_NE(r.status().message().find("test_Einsum"), std::string::npos) << bad;
    }
  }
  // Sizes that disagree (3 vs 4) in two operands.
  EXPECT_EQ(code(einsum("ij,ij->i", {m, random_f32({4, 3}, 22)}, {3})),
            ErrorCode::kInvalidArgument);
  // The output shape must be the equation's.
  EXPECT_EQ(code(einsum("ij->ji", {m}, {3, 4})), ErrorCode::kInvalidArgument);
  // numpy refuses an explicit output without the '...' dims; so does the kernel, as unsupported.
  EXPECT_EQ(code(einsum("...j->j", {m}, {4})), ErrorCode::kUnimplemented);
  // '...' covering no dims is fine.
  EXPECT_EQ(code(einsum("...ij->j", {m}, {4})), ErrorCode::kOk);
  // Integer Einsum is not implemented.
  const Tensor mi = i64({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(code(einsum("ij->ji", {mi}, {2, 2}, DType::kI64)), ErrorCode::kUnimplemented);
  // Operands of different dtypes.
  EXPECT_EQ(code(einsum("ij,ij->ij", {m, i64({3, 4}, std::vector<int64_t>(12, 1))}, {3, 4})),
            ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace hsched::cpu::test
