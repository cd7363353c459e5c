// TfIdfVectorizer: for each row of an i32/i64 input, counts the n-grams of a pool
// (pool_int64s; a string pool is refused) found in it, their elements skip + 1 apart for every
// skip up to max_skip_count (a 1-gram counted once), into an f32 row of max(ngram_indexes) + 1
// values: the counts (TF), the n-gram's weight where its count is not 0 (IDF), or count times
// weight (TFIDF). The pool is checked and indexed when the kernel is created.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "backends/cpu/kernels/index_util.h"
#include "backends/cpu/kernels/kernel.h"
#include "backends/cpu/kernels/layout_util.h"

namespace hsched::cpu {
namespace {

constexpr int64_t kMaxWidth = int64_t{1} << 24;  // output values per row
constexpr int64_t kMaxWork = int64_t{1} << 32;   // n-gram element reads per run
enum class Mode { kTf, kIdf, kTfIdf };

struct TfIdfPlan {
  Mode mode = Mode::kTf;
  int64_t min_n = 1, max_n = 1, max_skip = 0;
  int64_t rows = 1, cols = 0, width = 0;
  bool is64 = true;
  std::map<std::vector<int64_t>, int64_t> grams;  // n-gram -> output index
  std::vector<float> weights;                     // per output index (1 where none is given)
};

void run_tfidf(const TfIdfPlan& p, const std::byte* data, float* out) {
  std::fill(out, out + p.rows * p.width, 0.0f);
  std::vector<float> counts(static_cast<size_t>(p.width));
  std::vector<int64_t> gram;
  for (int64_t r = 0; r < p.rows; ++r) {
    std::fill(counts.begin(), counts.end(), 0.0f);
    const int64_t row = r * p.cols;
    for (int64_t skip = 0; skip <= p.max_skip; ++skip) {
      for (int64_t start = 0; start < p.cols; ++start) {
        for (int64_t n = std::max<int64_t>(p.min_n, skip > 0 ? 2 : 1); n <= p.max_n; ++n) {
          if (start + (n - 1) * (skip + 1) >= p.cols) break;
          gram.clear();
          for (int64_t j = 0; j < n; ++j)
            gram.push_back(index_at(data, p.is64, row + start + j * (skip + 1)));
          const auto found = p.grams.find(gram);
          if (found != p.grams.end()) counts[static_cast<size_t>(found->second)] += 1.0f;
        }
      }
    }
    float* y = out + r * p.width;
    for (size_t i = 0; i < counts.size(); ++i) {
      const float w = p.weights[i];
      y[i] = p.mode == Mode::kTf    ? counts[i]
             : p.mode == Mode::kIdf ? (counts[i] > 0 ? w : 0.0f)
                                    : counts[i] * w;
    }
  }
}

Result<std::unique_ptr<Kernel>> make_tfidf(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec, false));
  const DType dtype = spec.inputs[0]->dtype;
  if (dtype != DType::kI32 && dtype != DType::kI64) {
    return unsupported(spec,
                       "input of dtype " + std::string(dtype_name(dtype)) + " (i32 and i64 only)");
  }
  if (spec.node.has_attr("pool_strings")) {
    return unsupported(spec, "pool_strings (string n-grams) is not supported");
  }
  const auto& dims = spec.in_dims(0);
  if (dims.empty() || dims.size() > 2) {
    return invalid_node(spec, "input must have rank 1 or 2, not " + dims_text(dims));
  }
  TfIdfPlan p;
  p.is64 = dtype == DType::kI64;
  p.rows = dims.size() == 2 ? dims[0] : 1;
  p.cols = dims.back();
  const std::string mode = spec.node.attr_string("mode", "");
  if (mode == "TF") {
    p.mode = Mode::kTf;
  } else if (mode == "IDF") {
    p.mode = Mode::kIdf;
  } else if (mode == "TFIDF") {
    p.mode = Mode::kTfIdf;
  } else {
    return invalid_node(spec, "mode '" + mode + "' is not TF, IDF or TFIDF");
  }
  p.min_n = spec.node.attr_int("min_gram_length", 0);
  p.max_n = spec.node.attr_int("max_gram_length", 0);
  p.max_skip = spec.node.attr_int("max_skip_count", 0);
  if (p.min_n < 1 || p.max_n < p.min_n || p.max_skip < 0) {
    return invalid_node(spec, "min_gram_length " + std::to_string(p.min_n) + ", max_gram_length " +
                                  std::to_string(p.max_n) + " and max_skip_count " +
                                  std::to_string(p.max_skip) +
                                  " must satisfy 1 <= min <= max and skip >= 0");
  }
  // Bounded by the row: longer grams and skips never fit in it.
  p.max_n = std::min(p.max_n, std::max<int64_t>(p.cols, 1));
  p.max_skip = std::min(p.max_skip, std::max<int64_t>(p.cols, 1));
  const double work = static_cast<double>(p.rows) * static_cast<double>(p.cols) *
                      static_cast<double>(p.max_skip + 1) * static_cast<double>(p.max_n) *
                      static_cast<double>(p.max_n);
  if (work > static_cast<double>(kMaxWork)) {
    return unsupported(spec, "more than 2^32 n-gram reads per run");
  }

  const std::vector<int64_t> pool = spec.node.attr_ints("pool_int64s");
  const std::vector<int64_t> starts = spec.node.attr_ints("ngram_counts");
  const std::vector<int64_t> indexes = spec.node.attr_ints("ngram_indexes");
  const auto pool_size = static_cast<int64_t>(pool.size());
  size_t gram_number = 0;
  for (size_t k = 0; k < starts.size(); ++k) {
    const auto n = static_cast<int64_t>(k + 1);
    const int64_t begin = starts[k];
    const int64_t end = k + 1 < starts.size() ? starts[k + 1] : pool_size;
    if (begin < 0 || end < begin || end > pool_size || (end - begin) % n != 0) {
      return invalid_node(spec, "ngram_counts does not split a pool of " +
                                    std::to_string(pool_size) + " values into whole " +
                                    std::to_string(n) + "-grams");
    }
    for (int64_t at = begin; at < end; at += n, ++gram_number) {
      if (gram_number >= indexes.size()) {
        return invalid_node(spec, "ngram_indexes has " + std::to_string(indexes.size()) +
                                      " values, fewer than the pool's n-grams");
      }
      const int64_t index = indexes[gram_number];
      if (index < 0 || index >= kMaxWidth) {
        return invalid_node(
            spec, "ngram_indexes value " + std::to_string(index) + " is outside [0, 2^24)");
      }
      p.grams[std::vector<int64_t>(pool.begin() + at, pool.begin() + at + n)] = index;
      p.width = std::max(p.width, index + 1);
    }
  }
  if (gram_number != indexes.size()) {
    return invalid_node(spec, "ngram_indexes has " + std::to_string(indexes.size()) +
                                  " values; the pool has " + std::to_string(gram_number) +
                                  " n-grams");
  }
  p.weights.assign(static_cast<size_t>(p.width), 1.0f);
  const auto attr = spec.node.attributes.find("weights");
  if (attr != spec.node.attributes.end()) {
    const auto* weights = std::get_if<std::vector<float>>(&attr->second);
    if (weights == nullptr || weights->size() != indexes.size()) {
      return invalid_node(
          spec, "weights must hold one float per n-gram (" + std::to_string(indexes.size()) + ")");
    }
    for (size_t g = 0; g < indexes.size(); ++g) {
      p.weights[static_cast<size_t>(indexes[g])] = (*weights)[g];
    }
  }
  const std::vector<int64_t> want =
      dims.size() == 2 ? std::vector<int64_t>{p.rows, p.width} : std::vector<int64_t>{p.width};
  if (spec.outputs.empty() || spec.outputs[0] == nullptr || spec.outputs[0]->dtype != DType::kF32 ||
      spec.out_dims(0) != want) {
    return invalid_node(spec, "output must be f32 " + dims_text(want));
  }
  return make_kernel([p](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    run_tfidf(p, in[0]->raw(), out[0]->values<float>().data());
    return Status::ok();
  });
}

}  // namespace

void register_text_kernels(KernelRegistry& registry) {
  registry.add("TfIdfVectorizer", make_tfidf);
}

}  // namespace hsched::cpu
