// LSTM, GRU and RNN with plain float loops, written from ONNX's operator equations: the fallback
// for what oneDNN does not compute exactly (clip, activations other than the defaults, uneven
// sequence_lens). Each (direction, batch row) pair is an independent recurrence; they run in
// parallel.
#include <algorithm>
#include <cstring>

#include "backends/cpu/kernels/parallel.h"
#include "backends/cpu/kernels/rnn_util.h"

namespace hsched::cpu {
namespace {

float dot(const float* a, const float* b, int64_t n) {
  float acc = 0.0f;
  for (int64_t i = 0; i < n; ++i) acc += a[i] * b[i];
  return acc;
}

const float* data_of(std::span<const Tensor* const> inputs, size_t index) {
  return index < inputs.size() && inputs[index] ? inputs[index]->values<float>().data() : nullptr;
}

float* data_of(std::span<Tensor* const> outputs, size_t index) {
  return index < outputs.size() && outputs[index] ? outputs[index]->values<float>().data()
                                                  : nullptr;
}

struct RnnData {
  const float *x, *w, *r, *bias, *initial_h, *initial_c, *peephole;
  float *y, *y_h, *y_c;
};

// One direction `d` of batch row `b` over its `len` steps.
void run_sequence(const RnnConfig& c, const RnnData& io, int64_t d, int64_t b, int64_t len) {
  const int64_t H = c.hidden, I = c.input_size, GH = c.gates * c.hidden;
  const float* W = io.w + d * GH * I;
  const float* R = io.r + d * GH * H;
  const float* wb = io.bias ? io.bias + d * 2 * GH : nullptr;
  const float* rb = wb ? wb + GH : nullptr;
  const auto& act = c.activations[static_cast<size_t>(d)];
  const auto activate = [&](size_t which, float v) {
    if (c.clip) v = std::clamp(v, -*c.clip, *c.clip);
    return act[which].apply(v);
  };
  const size_t uH = static_cast<size_t>(H);
  std::vector<float> h(uH, 0.0f), cell(uH, 0.0f), next(uH), gates(static_cast<size_t>(GH)),
      reset_h(uH);
  const int64_t state = c.state_offset(d, b);
  if (io.initial_h) std::copy_n(io.initial_h + state, H, h.begin());
  if (io.initial_c) std::copy_n(io.initial_c + state, H, cell.begin());
  for (int64_t s = 0; s < len; ++s) {
    const int64_t t = c.is_direction_reversed(d) ? len - 1 - s : s;
    const float* xt = io.x + c.x_offset(t, b);
    // The input part of every gate, with both biases where the cell adds them unscaled.
    for (int64_t row = 0; row < GH; ++row) {
      gates[static_cast<size_t>(row)] = dot(W + row * I, xt, I) + (wb ? wb[row] : 0.0f);
    }
    const auto recurrent = [&](int64_t row, const float* state_h) {
      return dot(R + row * H, state_h, H) + (rb ? rb[row] : 0.0f);
    };
    switch (c.cell) {
      case RnnCell::kRnn:
        for (int64_t j = 0; j < H; ++j) {
          next[static_cast<size_t>(j)] =
              activate(0, gates[static_cast<size_t>(j)] + recurrent(j, h.data()));
        }
        break;
      case RnnCell::kGru: {
        // z = f(...), r = f(...); ONNX's gate blocks are z, r, h.
        for (int64_t row = 0; row < 2 * H; ++row) {
          gates[static_cast<size_t>(row)] =
              activate(0, gates[static_cast<size_t>(row)] + recurrent(row, h.data()));
        }
        const float* z = gates.data();
        const float* r = gates.data() + H;
        for (int64_t j = 0; j < H; ++j)
          reset_h[static_cast<size_t>(j)] = r[j] * h[static_cast<size_t>(j)];
        for (int64_t j = 0; j < H; ++j) {
          const int64_t row = 2 * H + j;
          const float hidden_in = c.linear_before_reset ? r[j] * recurrent(row, h.data())
                                                        : recurrent(row, reset_h.data());
          const float candidate = activate(1, gates[static_cast<size_t>(row)] + hidden_in);
          next[static_cast<size_t>(j)] =
              (1.0f - z[j]) * candidate + z[j] * h[static_cast<size_t>(j)];
        }
        break;
      }
      case RnnCell::kLstm: {
        // ONNX's gate blocks are i, o, f, c; P's are i, o, f.
        for (int64_t row = 0; row < GH; ++row)
          gates[static_cast<size_t>(row)] += recurrent(row, h.data());
        const float* p = io.peephole ? io.peephole + d * 3 * H : nullptr;
        for (int64_t j = 0; j < H; ++j) {
          const size_t uj = static_cast<size_t>(j);
          const float c_prev = cell[uj];
          const float i_gate = activate(0, gates[uj] + (p ? p[j] * c_prev : 0.0f));
          const float f_gate = activate(0, gates[uj + 2 * uH] + (p ? p[2 * H + j] * c_prev : 0.0f));
          const float c_cand = activate(1, gates[uj + 3 * uH]);
          const float c_new = f_gate * c_prev + i_gate * c_cand;
          const float o_gate = activate(0, gates[uj + uH] + (p ? p[H + j] * c_new : 0.0f));
          cell[uj] = c_new;
          next[uj] = o_gate * activate(2, c_new);
        }
        break;
      }
    }
    h.swap(next);
    if (io.y) std::copy_n(h.begin(), H, io.y + c.y_offset(t, d, b));
  }
  // A row with no steps has no last state: its Y_h and Y_c are zeros, as its Y is.
  if (io.y_h) {
    if (len == 0)
      std::fill_n(io.y_h + state, H, 0.0f);
    else
      std::copy_n(h.begin(), H, io.y_h + state);
  }
  if (io.y_c) {
    if (len == 0)
      std::fill_n(io.y_c + state, H, 0.0f);
    else
      std::copy_n(cell.begin(), H, io.y_c + state);
  }
}

}  // namespace

Status run_rnn_loops(const RnnConfig& c, std::span<const Tensor* const> inputs,
                     std::span<Tensor* const> outputs) {
  std::vector<int64_t> lens(static_cast<size_t>(c.batch), c.seq_length);
  if (!c.constant_seq_lens.empty()) {
    lens = c.constant_seq_lens;
  } else if (c.has_seq_lens) {
    HSCHED_ASSIGN_OR_RETURN(lens, read_seq_lens(c, *inputs[kRnnSeqLens]));
  }
  const bool lstm = c.cell == RnnCell::kLstm;
  const RnnData io{data_of(inputs, kRnnX),
                   data_of(inputs, kRnnW),
                   data_of(inputs, kRnnR),
                   c.has_bias ? data_of(inputs, kRnnB) : nullptr,
                   c.has_initial_h ? data_of(inputs, kRnnInitialH) : nullptr,
                   c.has_initial_c ? data_of(inputs, kRnnInitialC) : nullptr,
                   c.has_peephole ? data_of(inputs, kRnnP) : nullptr,
                   data_of(outputs, kRnnY),
                   data_of(outputs, kRnnYh),
                   lstm ? data_of(outputs, kRnnYc) : nullptr};
  // Steps past a row's length leave zeros in Y.
  if (io.y) std::fill_n(io.y, outputs[kRnnY]->values<float>().size(), 0.0f);
  const int64_t rows = c.directions * c.batch;
  const int64_t work_per_row =
      std::max<int64_t>(1, c.seq_length * c.gates * c.hidden * (c.input_size + c.hidden));
  parallel_range(
      rows,
      [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const int64_t d = i / c.batch, b = i % c.batch;
          run_sequence(c, io, d, b, lens[static_cast<size_t>(b)]);
        }
      },
      std::max<int64_t>(1, kParallelGrain / work_per_row));
  return Status::ok();
}

}  // namespace hsched::cpu
