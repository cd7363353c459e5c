// Einsum: the equation parsed once into labels (numpy's rules: an implicit output keeps the
// labels used once, in ASCII order, after the '...' dims; a label repeated within a term reads
// a diagonal; labels missing from the output are summed; size-1 dims broadcast), then one
// contraction loop over (output labels) x (summed labels), for f32 and f64, accumulating in
// double. Parallel over output elements. What it cannot run (other dtypes, an explicit output
// that drops the '...' dims, as numpy also refuses) is refused when created.
#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/kernels/kernel.h"
#include "backends/cpu/kernels/parallel.h"

namespace hsched::cpu {
namespace {

using Inputs = std::span<const Tensor* const>;
using Outputs = std::span<Tensor* const>;

constexpr int kLetters = 52;  // a-z are labels 0-25, A-Z 26-51, the '...' dims 52 and up
constexpr int kEllipsis = -1;

// Labels of one term in the order written; kEllipsis where '...' stands.
using Term = std::vector<int>;

std::optional<int> letter_label(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return std::nullopt;
}

char label_letter(int label) {
  return static_cast<char>(label < 26 ? 'a' + label : 'A' + (label - 26));
}

// What the contraction loop needs: for each operand the element stride that each output label
// and each summed label moves it by (0 for a label it lacks or broadcasts).
struct EinsumPlan {
  std::vector<int64_t> out_dims;
  std::vector<int64_t> sum_dims;
  std::vector<std::vector<int64_t>> out_strides, sum_strides;  // [operand][label]
};

class EquationParser {
 public:
  EquationParser(std::string context, const std::string& equation) : context_(std::move(context)) {
    for (char c : equation) {
      if (!std::isspace(static_cast<unsigned char>(c))) equation_ += c;
    }
  }

  Result<EinsumPlan> plan(const std::vector<std::vector<int64_t>>& dims) {
    const size_t arrow = equation_.find("->");
    if (arrow != std::string::npos && equation_.find("->", arrow + 2) != std::string::npos) {
      return error("has more than one '->'");
    }
    const std::string lhs = equation_.substr(0, arrow);
    std::vector<Term> terms;
    for (size_t begin = 0;;) {
      const size_t comma = lhs.find(',', begin);
      HSCHED_ASSIGN_OR_RETURN(Term term, parse_term(lhs.substr(begin, comma - begin)));
      terms.push_back(std::move(term));
      if (comma == std::string::npos) break;
      begin = comma + 1;
    }
    if (terms.size() != dims.size()) {
      return error("has " + std::to_string(terms.size()) + " terms for " +
                   std::to_string(dims.size()) + " inputs");
    }
    // The '...' of each operand covers the dims its letters leave; all are right-aligned.
    size_t ellipsis_rank = 0;
    std::vector<std::vector<int>> axis_labels(terms.size());
    std::array<int, kLetters> uses{};
    for (size_t i = 0; i < terms.size(); ++i) {
      const bool has_ellipsis =
          std::find(terms[i].begin(), terms[i].end(), kEllipsis) != terms[i].end();
      const size_t letters = terms[i].size() - (has_ellipsis ? 1 : 0);
      if (dims[i].size() < letters || (!has_ellipsis && dims[i].size() != letters)) {
        return error("term " + std::to_string(i) + " has " + std::to_string(letters) +
                     " labels for an input of rank " + std::to_string(dims[i].size()));
      }
      ellipsis_rank = std::max(ellipsis_rank, dims[i].size() - letters);
      for (int label : terms[i]) {
        if (label != kEllipsis) ++uses[static_cast<size_t>(label)];
      }
    }
    for (size_t i = 0; i < terms.size(); ++i) {
      const size_t covered = dims[i].size() + 1 - terms[i].size();  // by '...', when present
      for (int label : terms[i]) {
        if (label != kEllipsis) {
          axis_labels[i].push_back(label);
          continue;
        }
        for (size_t k = 0; k < covered; ++k) {
          axis_labels[i].push_back(kLetters + static_cast<int>(ellipsis_rank - covered + k));
        }
      }
    }
    // Sizes: every occurrence equal, or 1 (broadcast).
    const size_t label_count = kLetters + ellipsis_rank;
    std::vector<int64_t> size(label_count, -1);
    for (size_t i = 0; i < terms.size(); ++i) {
      for (size_t a = 0; a < dims[i].size(); ++a) {
        int64_t& s = size[static_cast<size_t>(axis_labels[i][a])];
        const int64_t d = dims[i][a];
        if (s == -1 || s == 1) {
          s = d;
        } else if (d != s && d != 1) {
          return error("gives label " + label_name(axis_labels[i][a]) + " sizes " +
                       std::to_string(s) + " and " + std::to_string(d));
        }
      }
    }
    std::vector<int> output;
    if (arrow != std::string::npos) {
      HSCHED_ASSIGN_OR_RETURN(output,
                              output_labels(equation_.substr(arrow + 2), uses, ellipsis_rank));
    } else {
      for (size_t k = 0; k < ellipsis_rank; ++k) output.push_back(kLetters + static_cast<int>(k));
      for (char c = 'A'; c <= 'z'; ++c) {  // ASCII order: upper case first
        const auto label = letter_label(c);
        if (label && uses[static_cast<size_t>(*label)] == 1) output.push_back(*label);
      }
    }
    std::vector<int> summed;
    for (size_t l = 0; l < label_count; ++l) {
      if (size[l] >= 0 && std::find(output.begin(), output.end(), l) == output.end()) {
        summed.push_back(static_cast<int>(l));
      }
    }
    EinsumPlan plan;
    int64_t work = 1;  // output elements x summed elements: the loop's trip count
    for (int l : output) plan.out_dims.push_back(size[static_cast<size_t>(l)]);
    for (int l : summed) plan.sum_dims.push_back(size[static_cast<size_t>(l)]);
    for (const auto* part : {&plan.out_dims, &plan.sum_dims}) {
      for (int64_t d : *part) {
        if (__builtin_mul_overflow(work, d, &work)) {
          return unimplemented(context_ + ": equation '" + equation_ +
                               "' needs more than 2^63 multiply-adds");
        }
      }
    }
    for (size_t i = 0; i < terms.size(); ++i) {
      std::vector<int64_t> by_label(label_count, 0);
      const auto strides = row_major_strides(dims[i]);
      for (size_t a = 0; a < dims[i].size(); ++a) {
        const auto l = static_cast<size_t>(axis_labels[i][a]);
        if (dims[i][a] == size[l]) by_label[l] += strides[a];  // else a broadcast size-1 dim
      }
      plan.out_strides.emplace_back();
      plan.sum_strides.emplace_back();
      for (int l : output) plan.out_strides.back().push_back(by_label[static_cast<size_t>(l)]);
      for (int l : summed) plan.sum_strides.back().push_back(by_label[static_cast<size_t>(l)]);
    }
    return plan;
  }

 private:
  Status error(const std::string& detail) const {
    return invalid_argument(context_ + ": equation '" + equation_ + "' " + detail);
  }

  static std::string label_name(int label) {
    return label < kLetters ? std::string("'") + label_letter(label) + "'"
                            : "'...' dim " + std::to_string(label - kLetters);
  }

  Result<Term> parse_term(const std::string& text) const {
    Term term;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text.compare(i, 3, "...") == 0) {
        if (std::find(term.begin(), term.end(), kEllipsis) != term.end()) {
          return error("has two '...' in one term");
        }
        term.push_back(kEllipsis);
        i += 2;
        continue;
      }
      const auto label = letter_label(text[i]);
      if (!label) return error(std::string("has the character '") + text[i] + "'");
      term.push_back(*label);
    }
    return term;
  }

  Result<std::vector<int>> output_labels(const std::string& text,
                                         const std::array<int, kLetters>& uses,
                                         size_t ellipsis_rank) const {
    HSCHED_ASSIGN_OR_RETURN(const Term term, parse_term(text));
    std::vector<int> output;
    bool has_ellipsis = false;
    for (int label : term) {
      if (label == kEllipsis) {
        has_ellipsis = true;
        for (size_t k = 0; k < ellipsis_rank; ++k) output.push_back(kLetters + static_cast<int>(k));
        continue;
      }
      if (uses[static_cast<size_t>(label)] == 0) {
        return error("outputs label " + label_name(label) + ", which no input has");
      }
      if (std::find(output.begin(), output.end(), label) != output.end()) {
        return error("outputs label " + label_name(label) + " twice");
      }
      output.push_back(label);
    }
    if (!has_ellipsis && ellipsis_rank > 0) {
      return unimplemented(context_ + ": equation '" + equation_ +
                           "' drops the '...' dims from its output (numpy refuses it too)");
    }
    return output;
  }

  std::string context_;
  std::string equation_;  // without whitespace
};

// out[o] = sum over the summed labels of the product of the operands' elements.
template <typename T>
void contract(const EinsumPlan& p, Inputs in, T* out) {
  const size_t operands = in.size();
  std::vector<const T*> data(operands);
  for (size_t i = 0; i < operands; ++i) data[i] = in[i]->values<T>().data();
  int64_t outputs = 1, sums = 1;
  for (int64_t d : p.out_dims) outputs *= d;
  for (int64_t d : p.sum_dims) sums *= d;
  const size_t out_rank = p.out_dims.size(), sum_rank = p.sum_dims.size();
  parallel_range(
      outputs,
      [&](int64_t begin, int64_t end) {
        std::vector<int64_t> base(operands), offset(operands), index(sum_rank);
        for (int64_t e = begin; e < end; ++e) {
          std::fill(base.begin(), base.end(), 0);
          int64_t rest = e;
          for (size_t a = out_rank; a-- > 0;) {
            const int64_t i = rest % p.out_dims[a];
            rest /= p.out_dims[a];
            for (size_t k = 0; k < operands; ++k) base[k] += i * p.out_strides[k][a];
          }
          offset = base;
          std::fill(index.begin(), index.end(), 0);
          double total = 0;
          for (int64_t s = 0; s < sums; ++s) {
            double product = 1;
            for (size_t k = 0; k < operands; ++k)
              product *= static_cast<double>(data[k][offset[k]]);
            total += product;
            // Next summed index: the odometer's last digit first, carrying left.
            for (size_t a = sum_rank; a-- > 0;) {
              for (size_t k = 0; k < operands; ++k) offset[k] += p.sum_strides[k][a];
              if (++index[a] < p.sum_dims[a]) break;
              for (size_t k = 0; k < operands; ++k)
                offset[k] -= p.sum_dims[a] * p.sum_strides[k][a];
              index[a] = 0;
            }
          }
          out[e] = static_cast<T>(total);
        }
      },
      std::max<int64_t>(
          1, kParallelGrain / std::max<int64_t>(1, sums * static_cast<int64_t>(operands))));
}

Result<std::unique_ptr<Kernel>> make_einsum(const KernelSpec& spec) {
  const std::string context = node_context(spec.node);
  if (spec.inputs.empty()) return invalid_argument(context + ": needs at least one input");
  if (spec.outputs.empty() || spec.outputs[0] == nullptr) {
    return invalid_argument(context + ": needs output 0");
  }
  const Value& y = *spec.outputs[0];
  if (y.dtype != DType::kF32 && y.dtype != DType::kF64) {
    return unsupported(spec, "dtype " + std::string(dtype_name(y.dtype)) + " (f32 and f64 only)");
  }
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const Value* v = spec.inputs[i];
    if (v == nullptr)
      return invalid_argument(context + ": input " + std::to_string(i) + " omitted");
    if (!v->shape.is_static() || !y.shape.is_static()) {
      return unsupported(spec, "dynamic shapes");
    }
    if (v->dtype != y.dtype) {
      return invalid_argument(context + ": input " + std::to_string(i) + " has dtype " +
                              std::string(dtype_name(v->dtype)) + ", the output " +
                              std::string(dtype_name(y.dtype)));
    }
    dims.push_back(v->shape.dims);
  }
  EquationParser parser(context, spec.node.attr_string("equation", ""));
  HSCHED_ASSIGN_OR_RETURN(EinsumPlan plan, parser.plan(dims));
  if (plan.out_dims != y.shape.dims) {
    return invalid_argument(context + ": output has shape " + y.shape.to_string() +
                            ", the equation gives " + Shape(plan.out_dims).to_string());
  }
  if (y.dtype == DType::kF64) {
    return make_kernel([plan](Inputs in, Outputs out) {
      contract<double>(plan, in, out[0]->values<double>().data());
      return Status::ok();
    });
  }
  return make_kernel([plan](Inputs in, Outputs out) {
    contract<float>(plan, in, out[0]->values<float>().data());
    return Status::ok();
  });
}

}  // namespace

void register_einsum_kernels(KernelRegistry& registry) { registry.add("Einsum", make_einsum); }

}  // namespace hsched::cpu
