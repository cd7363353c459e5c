// Conformance of the data-movement kernels (layout_kernels.cpp, gather_kernels.cpp) against plain
// index-mapping references. Pad and Resize: pad_resize_test.cpp.
#include "layout_test_util.h"

namespace hsched::cpu::test {
namespace {

// ---------------------------------------------------------------- copies

TEST(CpuLayout, ReshapeFamilyCopiesEveryDtype) {
  for (DType t : kAllTypes) {
    const Tensor x = pattern(t, {2, 3, 5});
    const Tensor r = run1("Reshape", {}, {{x}, {i64({2}, {6, 5}), true}}, t, {6, 5});
    EXPECT_EQ(0, std::memcmp(r.raw(), x.raw(), x.byte_size()));
    const Tensor f = run1("Flatten", {{"axis", int64_t{-1}}}, {{x}}, t, {6, 5});
    EXPECT_EQ(0, std::memcmp(f.raw(), x.raw(), x.byte_size()));
    const Tensor u = run1("Unsqueeze", {}, {{x}, {i64({1}, {0}), true}}, t, {1, 2, 3, 5});
    const Tensor s = run1("Squeeze", {}, {{u}, {i64({1}, {0}), true}}, t, {2, 3, 5});
    EXPECT_EQ(0, std::memcmp(s.raw(), x.raw(), x.byte_size()));
  }
  const Tensor big = pattern(DType::kF32, {4, 300, 300});
  const Tensor r =
      run1("Reshape", {}, {{big}, {i64({2}, {1200, 300}), true}}, DType::kF32, {1200, 300});
  EXPECT_EQ(0, std::memcmp(r.raw(), big.raw(), big.byte_size()));
  run1("Reshape", {}, {{Tensor(DType::kF32, {0, 4})}, {i64({2}, {4, 0}), true}}, DType::kF32,
       {4, 0});
  auto bad = run_op("Reshape", {}, {{pattern(DType::kF32, {2, 3})}, {i64({1}, {5}), true}},
                    {{DType::kF32, {5}}});
  EXPECT_FALSE(bad.is_ok());
}

// ---------------------------------------------------------------- Transpose

Tensor ref_transpose(const Tensor& x, const std::vector<int64_t>& perm) {
  std::vector<int64_t> out_dims;
  for (int64_t p : perm) out_dims.push_back(x.dims()[static_cast<size_t>(p)]);
  return reference(x, out_dims, [&](const Index& o) {
    Index i(perm.size());
    for (size_t k = 0; k < perm.size(); ++k) i[static_cast<size_t>(perm[k])] = o[k];
    return std::optional<Index>(i);
  });
}

void check_transpose(DType t, const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  const Tensor x = pattern(t, dims, 3);
  const Tensor expected = ref_transpose(x, perm);
  const Tensor actual = run1("Transpose", {{"perm", perm}}, {{x}}, t, expected.dims());
  EXPECT_TRUE(all_close(actual, expected)) << dtype_name(t) << " " << x.shape().to_string();
}

TEST(CpuLayout, TransposeCommonModelPerms) {
  check_transpose(DType::kF32, {1, 197, 3, 3, 64}, {2, 0, 3, 1, 4});  // ViT qkv split
  check_transpose(DType::kF32, {1, 3, 197, 64}, {0, 1, 3, 2});        // k^T
  check_transpose(DType::kF32, {1, 64, 56, 56}, {0, 2, 3, 1});        // NCHW -> NHWC
  check_transpose(DType::kF32, {1, 56, 56, 64}, {0, 3, 1, 2});        // NHWC -> NCHW
  check_transpose(DType::kF32, {1, 197, 3, 64}, {0, 2, 1, 3});        // heads
  check_transpose(DType::kF32, {2, 3, 300, 257}, {3, 2, 1, 0});
}

TEST(CpuLayout, TransposeAllPermsAllDtypes) {
  const std::vector<std::vector<int64_t>> shapes = {{5, 7, 9}, {3, 1, 33, 17}, {2, 3, 4, 5, 6}};
  for (const auto& dims : shapes) {
    std::vector<int64_t> perm(dims.size());
    std::iota(perm.begin(), perm.end(), 0);
    int tried = 0;
    do {
      // Every perm for f32, a spread of them for the other element sizes.
      for (DType t : kAllTypes) {
        if (t == DType::kF32 || tried % 7 == 0) check_transpose(t, dims, perm);
      }
      ++tried;
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST(CpuLayout, TransposeDefaultPermZeroSizeAndLarge) {
  const Tensor x = pattern(DType::kI64, {4, 5, 6});
  EXPECT_TRUE(
      all_close(run1("Transpose", {}, {{x}}, DType::kI64, {6, 5, 4}), ref_transpose(x, {2, 1, 0})));
  run1("Transpose", {{"perm", std::vector<int64_t>{1, 0, 2}}}, {{Tensor(DType::kF32, {3, 0, 2})}},
       DType::kF32, {0, 3, 2});
  // Sizes well above the parallel grain, odd extents that do not fill the last tile.
  check_transpose(DType::kF32, {3, 301, 257}, {2, 0, 1});
  check_transpose(DType::kI64, {129, 1031}, {1, 0});
  check_transpose(DType::kU8, {1000, 333}, {1, 0});
  check_transpose(DType::kF16, {7, 100, 99}, {0, 2, 1});
  auto bad = run_op("Transpose", {{"perm", std::vector<int64_t>{0, 0}}},
                    {{pattern(DType::kF32, {2, 2})}}, {{DType::kF32, {2, 2}}});
  EXPECT_FALSE(bad.is_ok());
}

// ---------------------------------------------------------------- Concat / Split

TEST(CpuLayout, ConcatAxesAndZeroSizeInputs) {
  for (DType t : {DType::kF32, DType::kI64, DType::kBool}) {
    for (int64_t axis : {0, 1, 2, -1, -3}) {
      const auto a = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
      std::vector<Tensor> parts;
      std::vector<OpInput> inputs;
      std::vector<int64_t> out_dims = {3, 4, 5};
      out_dims[a] = 0;
      for (int64_t extent : {2, 0, 3, 1}) {
        std::vector<int64_t> d = {3, 4, 5};
        d[a] = extent;
        out_dims[a] += extent;
        parts.push_back(pattern(t, d, static_cast<uint32_t>(extent + 10)));
        inputs.push_back({parts.back()});
      }
      // The expected output, element by element: walk the parts along the axis.
      Tensor want(t, out_dims);
      const size_t elem = dtype_size(t);
      Index idx(3, 0);
      for (int64_t e = 0; e < want.elements(); ++e) {
        int64_t pos = idx[a];
        size_t p = 0;
        while (pos >= parts[p].dims()[a]) pos -= parts[p++].dims()[a];
        Index src = idx;
        src[a] = pos;
        const auto& pd = parts[p].dims();
        const int64_t off = (src[0] * pd[1] + src[1]) * pd[2] + src[2];
        std::memcpy(want.raw() + static_cast<size_t>(e) * elem,
                    parts[p].raw() + static_cast<size_t>(off) * elem, elem);
        for (size_t k = 3; k-- > 0;) {
          if (++idx[k] < out_dims[k]) break;
          idx[k] = 0;
        }
      }
      EXPECT_TRUE(all_close(run1("Concat", {{"axis", axis}}, inputs, t, out_dims), want))
          << "axis " << axis;
    }
  }
}

TEST(CpuLayout, ConcatLargeAxisZero) {
  const Tensor a = pattern(DType::kF32, {300, 256}, 1), b = pattern(DType::kF32, {200, 256}, 2);
  const Tensor out = run1("Concat", {{"axis", int64_t{0}}}, {{a}, {b}}, DType::kF32, {500, 256});
  EXPECT_EQ(0, std::memcmp(out.raw(), a.raw(), a.byte_size()));
  EXPECT_EQ(0, std::memcmp(out.raw() + a.byte_size(), b.raw(), b.byte_size()));
}

void check_split(const Tensor& x, int64_t axis, const std::vector<int64_t>& sizes,
                 const AttributeMap& attrs, std::vector<OpInput> inputs, int64_t opset) {
  const auto a =
      static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(x.dims().size()) : axis);
  std::vector<OpOutput> outputs;
  for (int64_t s : sizes) {
    auto d = x.dims();
    d[a] = s;
    outputs.push_back({x.dtype(), d});
  }
  inputs.insert(inputs.begin(), OpInput{x});
  auto result = run_op("Split", attrs, inputs, outputs, opset);
  ASSERT_TRUE(result.is_ok()) << result.status().message();
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const Tensor want = reference(x, outputs[i].dims, [&](const Index& o) {
      Index s = o;
      s[a] += start;
      return std::optional<Index>(s);
    });
    EXPECT_TRUE(all_close(result.value()[i], want)) << "output " << i;
    start += sizes[i];
  }
}

TEST(CpuLayout, SplitAttributeInputAndEqual) {
  const Tensor x = pattern(DType::kF32, {4, 9, 5});
  check_split(x, 1, {2, 3, 4}, {{"axis", int64_t{1}}, {"split", std::vector<int64_t>{2, 3, 4}}}, {},
              11);
  check_split(x, -1, {1, 0, 4}, {{"axis", int64_t{-1}}}, {{i64({3}, {1, 0, 4}), true}}, 13);
  check_split(x, 1, {3, 3, 3}, {{"axis", int64_t{1}}}, {}, 13);
  check_split(pattern(DType::kI64, {10, 3}), 0, {4, 4, 2}, {{"num_outputs", int64_t{3}}}, {}, 18);
  check_split(pattern(DType::kBool, {2, 300, 200}), 1, {150, 150}, {{"axis", int64_t{1}}}, {}, 13);
}

// ---------------------------------------------------------------- Slice

struct SliceCase {
  std::vector<int64_t> starts, ends, axes, steps;
};

// Reference: per axis, begin and step after ONNX clamping, applied element by element.
std::pair<std::vector<int64_t>, Source> ref_slice(const std::vector<int64_t>& dims,
                                                  const SliceCase& c) {
  const size_t rank = dims.size();
  std::vector<int64_t> begin(rank, 0), step(rank, 1), out = dims;
  for (size_t i = 0; i < c.starts.size(); ++i) {
    int64_t a = c.axes.empty() ? static_cast<int64_t>(i) : c.axes[i];
    if (a < 0) a += static_cast<int64_t>(rank);
    const auto ax = static_cast<size_t>(a);
    const int64_t d = dims[ax];
    const int64_t s = c.steps.empty() ? 1 : c.steps[i];
    // Plain, slow clamping as the ONNX spec words it, in __int128 to dodge overflow.
    __int128 b = c.starts[i], e = c.ends[i];
    if (b < 0) b += d;
    if (e < 0) e += d;
    if (s > 0) {
      b = std::max<__int128>(0, std::min<__int128>(b, d));
      e = std::max<__int128>(0, std::min<__int128>(e, d));
    } else {
      b = std::max<__int128>(0, std::min<__int128>(b, d - 1));
      e = std::max<__int128>(-1, std::min<__int128>(e, d - 1));
    }
    int64_t n = 0;
    for (__int128 k = b; s > 0 ? k < e : k > e; k += s) ++n;
    out[ax] = d == 0 ? 0 : n;
    begin[ax] = static_cast<int64_t>(b);
    step[ax] = s;
  }
  return {out, [=](const Index& o) {
            Index i(rank);
            for (size_t a = 0; a < rank; ++a) i[a] = begin[a] + o[a] * step[a];
            return std::optional<Index>(i);
          }};
}

void check_slice(DType t, const std::vector<int64_t>& dims, const SliceCase& c, bool constant,
                 bool use_i32 = false) {
  const Tensor x = pattern(t, dims, 5);
  auto [out_dims, source] = ref_slice(dims, c);
  const Tensor want = reference(x, out_dims, source);
  auto param = [&](const std::vector<int64_t>& v) -> OpInput {
    if (!use_i32) return {i64({static_cast<int64_t>(v.size())}, v), constant};
    std::vector<int32_t> n;
    for (int64_t e : v) {
      n.push_back(static_cast<int32_t>(std::clamp<int64_t>(e, INT32_MIN, INT32_MAX)));
    }
    return {i32({static_cast<int64_t>(v.size())}, n), constant};
  };
  std::vector<OpInput> inputs = {{x}, param(c.starts), param(c.ends)};
  if (!c.axes.empty() || !c.steps.empty()) {
    std::vector<int64_t> axes = c.axes;
    if (axes.empty()) {
      axes.resize(c.starts.size());
      std::iota(axes.begin(), axes.end(), 0);
    }
    inputs.push_back(param(axes));
  }
  if (!c.steps.empty()) inputs.push_back(param(c.steps));
  EXPECT_TRUE(all_close(run1("Slice", {}, inputs, t, out_dims, 13), want))
      << "constant " << constant << " i32 " << use_i32;
}

TEST(CpuLayout, SliceStepsClampingAndDtypes) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  const std::vector<SliceCase> cases = {
      {{1}, {kMax}, {1}, {}},  // x[:, 1:]
      {{0, 2}, {kMax, -1}, {0, 2}, {}},
      {{-1}, {kMin}, {-1}, {-1}},   // reverse the last axis
      {{kMax}, {kMin}, {0}, {-2}},  // every other, from the end
      {{5, -100}, {1, 100}, {1, 2}, {-1, 3}},
      {{2}, {2}, {1}, {}},  // empty
      {{-3}, {kMax}, {-2}, {1}},
      {{0, 0, 0}, {kMax, kMax, kMax}, {}, {2, 3, 4}},
  };
  for (const auto& c : cases) {
    for (DType t : {DType::kF32, DType::kI64, DType::kBool, DType::kF16}) {
      check_slice(t, {4, 7, 9}, c, true);
    }
    check_slice(DType::kF32, {4, 7, 9}, c, false);
    check_slice(DType::kI64, {4, 7, 9}, c, false, true);
  }
  check_slice(DType::kF32, {3, 0, 5}, {{0}, {kMax}, {1}, {-1}}, true);
  check_slice(DType::kF32, {64, 200, 17}, {{1, 3}, {kMax, 190}, {0, 1}, {2, 1}}, true);  // large
}

TEST(CpuLayout, SliceOpset9AttributesAndBadRuntimeInputs) {
  const Tensor x = pattern(DType::kF32, {5, 6});
  const AttributeMap attrs = {{"starts", std::vector<int64_t>{1, -4}},
                              {"ends", std::vector<int64_t>{4, kMaxDim}},
                              {"axes", std::vector<int64_t>{0, 1}}};
  auto [dims, source] = ref_slice({5, 6}, {{1, -4}, {4, kMaxDim}, {0, 1}, {}});
  EXPECT_TRUE(
      all_close(run1("Slice", attrs, {{x}}, DType::kF32, dims, 9), reference(x, dims, source)));
  // A runtime `ends` that disagrees with the static output shape is an error, not a stray write.
  auto bad = run_op("Slice", {}, {{x}, {i64({1}, {0})}, {i64({1}, {5})}}, {{DType::kF32, {2, 6}}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("test_Slice"), std::string::npos);
}

// ---------------------------------------------------------------- Gather

void check_gather(DType t, const std::vector<int64_t>& dims, int64_t axis, const Tensor& indices) {
  const Tensor x = pattern(t, dims, 7);
  const auto a = static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(dims.size()) : axis);
  std::vector<int64_t> out_dims(dims.begin(), dims.begin() + static_cast<int64_t>(a));
  out_dims.insert(out_dims.end(), indices.dims().begin(), indices.dims().end());
  out_dims.insert(out_dims.end(), dims.begin() + static_cast<int64_t>(a) + 1, dims.end());
  const size_t q = indices.dims().size();
  const Tensor want = reference(x, out_dims, [&](const Index& o) {
    int64_t flat = 0;
    for (size_t k = 0; k < q; ++k) flat = flat * indices.dims()[k] + o[a + k];
    int64_t v = indices.dtype() == DType::kI64
                    ? indices.values<int64_t>()[static_cast<size_t>(flat)]
                    : indices.values<int32_t>()[static_cast<size_t>(flat)];
    if (v < 0) v += dims[a];
    Index i(o.begin(), o.begin() + static_cast<int64_t>(a));
    i.push_back(v);
    i.insert(i.end(), o.begin() + static_cast<int64_t>(a + q), o.end());
    return std::optional<Index>(i);
  });
  for (bool constant : {false, true}) {
    EXPECT_TRUE(
        all_close(run1("Gather", {{"axis", axis}}, {{x}, {indices, constant}}, t, out_dims), want))
        << dtype_name(t) << " axis " << axis;
  }
}

TEST(CpuLayout, GatherAxesNegativeIndicesAndScalars) {
  for (DType t : {DType::kF32, DType::kI64, DType::kBool, DType::kF16}) {
    check_gather(t, {5, 4, 3}, 0, i64({2, 2}, {0, -1, 4, 2}));
    check_gather(t, {5, 4, 3}, 1, i32({3}, {-4, 3, 0}));
    check_gather(t, {5, 4, 3}, -1, i64({}, {-1}));  // scalar index drops the axis
    check_gather(t, {5, 4, 3}, 2, i64({0}, {}));
  }
  // Embedding lookup above the parallel grain.
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 128; ++i) ids.push_back((i * 37) % 1000 - 500);
  check_gather(DType::kF32, {1000, 256}, 0, i64({1, 128}, ids));
}

TEST(CpuLayout, GatherOutOfRangeIsAnErrorNamingTheNode) {
  const Tensor x = pattern(DType::kF32, {5, 4});
  for (const Tensor& idx : {i64({2}, {1, 5}), i64({1}, {-6}), i64({1}, {kMaxDim})}) {
    auto r =
        run_op("Gather", {{"axis", int64_t{0}}}, {{x}, {idx}}, {{DType::kF32, {idx.dims()[0], 4}}});
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("test_Gather"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("out of range"), std::string::npos);
  }
  auto r =
      run_op("Gather", {{"axis", int64_t{1}}}, {{x}, {i32({1}, {4})}}, {{DType::kF32, {5, 1}}});
  EXPECT_FALSE(r.is_ok());
}

TEST(CpuLayout, GatherElements) {
  for (DType t : {DType::kF32, DType::kI64, DType::kU8}) {
    const Tensor x = pattern(t, {4, 5, 6}, 9);
    for (int64_t axis : {0, 1, 2, -1}) {
      const auto a = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
      std::vector<int64_t> idx_dims = {3, 5, 4};  // smaller than data on non-axis axes is legal
      std::vector<int64_t> values;
      const int64_t d = x.dims()[a];
      for (int64_t i = 0; i < count(idx_dims); ++i) values.push_back((i * 5) % (2 * d) - d);
      const Tensor idx = i64(idx_dims, values);
      const Tensor want = reference(x, idx_dims, [&](const Index& o) {
        const int64_t flat = (o[0] * idx_dims[1] + o[1]) * idx_dims[2] + o[2];
        int64_t v = values[static_cast<size_t>(flat)];
        if (v < 0) v += x.dims()[a];
        Index i = o;
        i[a] = v;
        return std::optional<Index>(i);
      });
      EXPECT_TRUE(
          all_close(run1("GatherElements", {{"axis", axis}}, {{x}, {idx}}, t, idx_dims), want))
          << "axis " << axis;
    }
  }
  auto bad =
      run_op("GatherElements", {{"axis", int64_t{0}}},
             {{pattern(DType::kF32, {2, 2})}, {i64({1, 2}, {0, 2})}}, {{DType::kF32, {1, 2}}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("test_GatherElements"), std::string::npos);
}

// ---------------------------------------------------------------- Expand / Tile / DepthToSpace

TEST(CpuLayout, ExpandBroadcasts) {
  struct Case {
    std::vector<int64_t> in, out;
  };
  for (const Case& c : std::vector<Case>{{{3, 1}, {2, 3, 4}},
                                         {{1, 1, 1, 5}, {2, 3, 5, 5}},
                                         {{}, {4, 4}},
                                         {{2, 1, 3}, {2, 600, 3}},
                                         {{1, 128}, {64, 128}},
                                         {{3, 0}, {2, 3, 0}}}) {
    for (DType t : {DType::kF32, DType::kBool, DType::kI64}) {
      const Tensor x = pattern(t, c.in, 2);
      const Tensor want = reference(x, c.out, [&](const Index& o) {
        Index i(c.in.size());
        const size_t shift = c.out.size() - c.in.size();
        for (size_t k = 0; k < c.in.size(); ++k) i[k] = c.in[k] == 1 ? 0 : o[k + shift];
        return std::optional<Index>(i);
      });
      const Tensor shape = i64({static_cast<int64_t>(c.out.size())}, c.out);
      EXPECT_TRUE(all_close(run1("Expand", {}, {{x}, {shape, true}}, t, c.out), want));
    }
  }
}

TEST(CpuLayout, TileRepeats) {
  struct Case {
    std::vector<int64_t> in, repeats;
  };
  for (const Case& c : std::vector<Case>{
           {{2, 3}, {2, 3}}, {{1, 5, 1}, {3, 1, 4}}, {{7}, {100}}, {{2, 0}, {3, 2}}}) {
    const Tensor x = pattern(DType::kI64, c.in, 4);
    std::vector<int64_t> out;
    for (size_t k = 0; k < c.in.size(); ++k) out.push_back(c.in[k] * c.repeats[k]);
    const Tensor want = reference(x, out, [&](const Index& o) {
      Index i(o.size());
      for (size_t k = 0; k < o.size(); ++k) i[k] = o[k] % c.in[k];
      return std::optional<Index>(i);
    });
    const Tensor reps = i64({static_cast<int64_t>(c.repeats.size())}, c.repeats);
    EXPECT_TRUE(all_close(run1("Tile", {}, {{x}, {reps, true}}, DType::kI64, out), want));
  }
}

TEST(CpuLayout, DepthToSpaceAndBack) {
  const int64_t b = 2;
  const Tensor x = pattern(DType::kF32, {2, 8, 3, 5});
  for (const std::string mode : {"DCR", "CRD"}) {
    const Tensor want = reference(x, {2, 2, 6, 10}, [&](const Index& o) {
      const int64_t c = o[1], y = o[2] / b, bh = o[2] % b, xx = o[3] / b, bw = o[3] % b;
      const int64_t ic = mode == "DCR" ? (bh * b + bw) * 2 + c : c * b * b + bh * b + bw;
      return std::optional<Index>(Index{o[0], ic, y, xx});
    });
    const Tensor y =
        run1("DepthToSpace", {{"blocksize", b}, {"mode", mode}}, {{x}}, DType::kF32, {2, 2, 6, 10});
    EXPECT_TRUE(all_close(y, want)) << mode;
    if (mode == "DCR") {  // SpaceToDepth inverts DCR
      EXPECT_TRUE(
          all_close(run1("SpaceToDepth", {{"blocksize", b}}, {{y}}, DType::kF32, {2, 8, 3, 5}), x));
    }
  }
}

// ---------------------------------------------------------------- Pad

}  // namespace
}  // namespace hsched::cpu::test
