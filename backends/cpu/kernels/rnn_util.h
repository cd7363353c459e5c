// Internal to the recurrent kernels (rnn_kernels.cpp, rnn_loops.cpp, rnn_dnnl.cpp): an ONNX
// LSTM, GRU or RNN node once validated, the plain-loop implementation every configuration has,
// and the oneDNN one the common configurations get.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "backends/cpu/kernels/kernel.h"

namespace hsched::cpu {

enum class RnnCell { kRnn, kGru, kLstm };

// The activation functions ONNX's recurrent ops name, with their alpha and beta.
struct RnnActivation {
  enum class Kind {
    kSigmoid,
    kTanh,
    kRelu,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus
  };
  Kind kind = Kind::kTanh;
  float alpha = 0.0f;
  float beta = 0.0f;
  float apply(float x) const;
};

// Input slots of all three ops (LSTM alone has initial_c and P).
inline constexpr size_t kRnnX = 0, kRnnW = 1, kRnnR = 2, kRnnB = 3, kRnnSeqLens = 4,
                        kRnnInitialH = 5, kRnnInitialC = 6, kRnnP = 7;
// Output slots: Y, Y_h and (LSTM) Y_c.
inline constexpr size_t kRnnY = 0, kRnnYh = 1, kRnnYc = 2;

// Everything a recurrent kernel reads of its node, checked against the shapes of its inputs and
// outputs (so that the loops below never index out of bounds).
struct RnnConfig {
  RnnCell cell = RnnCell::kRnn;
  int64_t gates = 1;  // weight blocks per direction: RNN 1, GRU 3 (z r h), LSTM 4 (i o f c)
  int64_t seq_length = 0, batch = 0, input_size = 0, hidden = 0;
  int64_t directions = 1;            // 2 for "bidirectional"
  bool reverse = false;              // direction "reverse" (a single direction run backwards)
  bool batch_first = false;          // layout 1: X [N, T, I], Y [N, T, D, H], states [N, D, H]
  bool linear_before_reset = false;  // GRU
  std::optional<float> clip;         // bound on every activation's input
  // activations[d]: f (RNN); f, g (GRU); f, g, h (LSTM) of direction d.
  std::vector<std::vector<RnnActivation>> activations;
  bool has_bias = false, has_seq_lens = false, has_initial_h = false, has_initial_c = false,
       has_peephole = false;
  // sequence_lens when it is a constant (empty otherwise, or when absent).
  std::vector<int64_t> constant_seq_lens;

  bool is_direction_reversed(int64_t d) const { return reverse || d == 1; }
  // Offsets in elements (layout-aware): X[t, b, :], Y[t, d, b, :] and states[d, b, :].
  int64_t x_offset(int64_t t, int64_t b) const {
    return (batch_first ? b * seq_length + t : t * batch + b) * input_size;
  }
  int64_t y_offset(int64_t t, int64_t d, int64_t b) const {
    return (batch_first ? (b * seq_length + t) * directions + d
                        : (t * directions + d) * batch + b) *
           hidden;
  }
  int64_t state_offset(int64_t d, int64_t b) const {
    return (batch_first ? b * directions + d : d * batch + b) * hidden;
  }
};

// Validates the node (shapes, dtypes, attributes); Unimplemented for what no kernel does.
Result<RnnConfig> parse_rnn_config(const KernelSpec& spec, RnnCell cell);

// sequence_lens' values, each checked to lie in [0, seq_length]; InvalidArgument otherwise.
Result<std::vector<int64_t>> read_seq_lens(const RnnConfig& config, const Tensor& seq_lens);

// Runs the node with plain loops: every configuration, sequence_lens included. Threading: the
// (direction, batch row) pairs run in parallel.
Status run_rnn_loops(const RnnConfig& config, std::span<const Tensor* const> inputs,
                     std::span<Tensor* const> outputs);

// The oneDNN kernel, or nullptr when oneDNN cannot compute this configuration exactly (the caller
// then uses the loops). It still falls back to the loops at run time for a non-constant
// sequence_lens whose values are not all seq_length.
Result<std::unique_ptr<Kernel>> make_dnnl_rnn_kernel(const KernelSpec& spec,
                                                     const RnnConfig& config);

}  // namespace hsched::cpu
