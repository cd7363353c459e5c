// TfIdfVectorizer against hand-counted n-grams (ONNX's own example data), in its three modes, on
// one row and a batch, i32 and i64; malformed nodes are refused when the kernel is created.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/op_test_util.h"

namespace hsched::cpu::test {
namespace {

// The pool of ONNX's examples: 1-grams 2, 3, 5, 4 (outputs 0-3); 2-grams (5,6), (7,8), (6,7)
// (outputs 4-6).
AttributeMap pool_attrs(const std::string& mode, int64_t min_n, int64_t max_n, int64_t skip) {
  return {{"mode", mode},
          {"min_gram_length", min_n},
          {"max_gram_length", max_n},
          {"max_skip_count", skip},
          {"ngram_counts", std::vector<int64_t>{0, 4}},
          {"ngram_indexes", std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}},
          {"pool_int64s", std::vector<int64_t>{2, 3, 5, 4, 5, 6, 7, 8, 6, 7}}};
}

const std::vector<int32_t> kRow{1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8};

std::vector<float> run_tfidf(const AttributeMap& attrs, const Tensor& x,
                             std::vector<int64_t> out_dims) {
  auto y = run_op("TfIdfVectorizer", attrs, {{x}}, {{DType::kF32, out_dims}}, 9);
  EXPECT_TRUE(y.is_ok()) << y.status().message();
  if (!y.is_ok()) return {};
  const auto v = (*y)[0].values<float>();
  return {v.begin(), v.end()};
}

TEST(CpuText, CountsUnigramsOnceAndBigramsForEverySkip) {
  const Tensor x = of(DType::kI32, {12}, kRow);
  // Skip 0: (7,8) at 5, (6,7) at 7, (5,6) at 9.
  EXPECT_EQ(run_tfidf(pool_attrs("TF", 2, 2, 0), x, {7}),
            (std::vector<float>{0, 0, 0, 0, 1, 1, 1}));
  // Skips up to 5 add (7,8) at 5 and 8 (skip 1) and at 7 and 11 (skip 3): 3 in all.
  EXPECT_EQ(run_tfidf(pool_attrs("TF", 2, 2, 5), x, {7}),
            (std::vector<float>{0, 0, 0, 0, 1, 3, 1}));
  // 1-grams are counted once whatever the skip: 3 three times, 5 once.
  EXPECT_EQ(run_tfidf(pool_attrs("TF", 1, 2, 5), x, {7}),
            (std::vector<float>{0, 3, 1, 0, 1, 3, 1}));
}

TEST(CpuText, IdfAndTfIdfUseTheWeightsOnABatch) {
  const Tensor x =
      of(DType::kI64, {2, 6}, std::vector<int64_t>{1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8});
  AttributeMap attrs = pool_attrs("IDF", 1, 2, 0);
  attrs["weights"] = std::vector<float>{0.5f, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(run_tfidf(attrs, x, {2, 7}),
            (std::vector<float>{0, 2, 0, 0, 0, 0, 0, /* row 2 */ 0, 0, 3, 0, 5, 0, 7}));
  attrs["mode"] = std::string("TFIDF");
  EXPECT_EQ(run_tfidf(attrs, x, {2, 7}),
            (std::vector<float>{0, 6, 0, 0, 0, 0, 0, /* row 2 */ 0, 0, 3, 0, 5, 0, 7}));
}

TEST(CpuText, MalformedNodesAreRefused) {
  const Tensor x = of(DType::kI32, {12}, kRow);
  auto refused = [&](AttributeMap attrs, std::vector<int64_t> out, const std::string& words) {
    expect_refused(run_op("TfIdfVectorizer", attrs, {{x}}, {{DType::kF32, out}}, 9),
                   "TfIdfVectorizer", words);
  };
  refused(pool_attrs("BM25", 1, 2, 0), {7}, "mode 'BM25'");
  refused(pool_attrs("TF", 3, 2, 0), {7}, "must satisfy 1 <= min <= max");
  AttributeMap uneven = pool_attrs("TF", 1, 2, 0);
  uneven["ngram_counts"] = std::vector<int64_t>{0, 5};  // 5 values left for 2-grams
  refused(uneven, {7}, "does not split a pool of 10 values into whole 2-grams");
  AttributeMap few = pool_attrs("TF", 1, 2, 0);
  few["ngram_indexes"] = std::vector<int64_t>{0, 1, 2};
  refused(few, {7}, "fewer than the pool's n-grams");
  AttributeMap far = pool_attrs("TF", 1, 2, 0);
  far["ngram_indexes"] = std::vector<int64_t>{0, 1, 2, 3, 4, 5, int64_t{1} << 40};
  refused(far, {7}, "outside [0, 2^24)");
  AttributeMap weights = pool_attrs("TFIDF", 1, 2, 0);
  weights["weights"] = std::vector<float>{1, 2};
  refused(weights, {7}, "one float per n-gram (7)");
  refused(pool_attrs("TF", 1, 2, 0), {8}, "output must be f32 7");
  const Tensor floats = f32({3}, {1, 2, 3});
  auto not_ints =
      run_op("TfIdfVectorizer", pool_attrs("TF", 1, 1, 0), {{floats}}, {{DType::kF32, {7}}}, 9);
  ASSERT_FALSE(not_ints.is_ok());
  EXPECT_EQ(not_ints.status().code(), ErrorCode::kUnimplemented);
}

}  // namespace
}  // namespace hsched::cpu::test
