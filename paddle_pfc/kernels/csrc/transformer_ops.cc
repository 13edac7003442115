// CPU kernels for a transformer block's element-wise and row work, where Paddle 3.3's CPU kernels
// are far below memory speed: the layer norm (its backward above all), a Linear's bias add (its
// gradient a column sum, which Paddle's add_grad reduces slowly) with an optional ReLU6, the end of a
// residual branch (bias, drop-path factor and residual add in one pass), the masking's per-sample
// token gather, and the
// attention's scaled softmax, and the whole multi-head attention from the qkv projection's output
// (products by MKL's cblas_sgemm on each head's columns, packed: no transposed tensors; the softmax
// rows on AVX-512 registers where the CPU has AVX-512F, attention_avx512.h). Built on first
// use by paddle_pfc/kernels/native_ops.py; the Python module paddle_pfc/kernels/transformer_ops.py
// states the contracts. Float32, one thread (the products: MKL's threads).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "attention_avx512.h"
#include "fast_math.h"
#include "paddle_ext.h"
#include "shared_library.h"

namespace {

void CheckFloat32(const paddle::Tensor& t, const char* op, const char* name) {
  PD_CHECK(t.is_cpu(), op, ": ", name, " must be a CPU tensor");
  PD_CHECK(t.dtype() == paddle::DataType::FLOAT32, op, ": ", name, " must be float32");
}

// (rows, columns) of a tensor whose last axis is `columns` long.
int64_t RowsOf(const paddle::Tensor& x, int64_t columns, const char* op) {
  PD_CHECK(!x.shape().empty() && x.shape().back() == columns, op, ": the last axis must be ", columns, " long");
  return columns == 0 ? 0 : x.numel() / columns;
}

// Column sums over `rows` rows accumulated in float within chunks of kChunk rows, in double
// across chunks (the sum of a few hundred thousand rows keeps float32 accuracy).
constexpr int64_t kChunk = 64;

class ColumnSums {
 public:
  explicit ColumnSums(int64_t columns) : chunk_(columns, 0.0f), total_(columns, 0.0), rows_(0) {}
  float* chunk() { return chunk_.data(); }
  void RowDone() {
    if (++rows_ % kChunk == 0) Flush();
  }
  void Flush() {
    for (size_t j = 0; j < chunk_.size(); ++j) total_[j] += chunk_[j];
    std::fill(chunk_.begin(), chunk_.end(), 0.0f);
  }
  void Store(float* out) {
    Flush();
    for (size_t j = 0; j < total_.size(); ++j) out[j] = static_cast<float>(total_[j]);
  }

 private:
  std::vector<float> chunk_;
  std::vector<double> total_;
  int64_t rows_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Layer norm over the last axis: out = (x - mean) * inv_std * scale + bias, inv_std =
// 1 / sqrt(biased variance + epsilon); saves each row's mean and inv_std for the backward.
std::vector<paddle::Tensor> LayerNormForward(const paddle::Tensor& x, const paddle::Tensor& scale,
                                             const paddle::Tensor& bias, float epsilon) {
  const char* op = "pfc_layer_norm";
  CheckFloat32(x, op, "x");
  CheckFloat32(scale, op, "scale");
  CheckFloat32(bias, op, "bias");
  const int64_t d = scale.numel();
  PD_CHECK(bias.numel() == d && d > 0, op, ": scale and bias must hold the last axis' length");
  const int64_t rows = RowsOf(x, d, op);
  auto out = paddle::empty(x.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto mean = paddle::empty({rows}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto inv_std = paddle::empty({rows}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  const float* xs = x.data<float>();
  const float* g = scale.data<float>();
  const float* b = bias.data<float>();
  float* y = out.data<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = xs + r * d;
    float* yr = y + r * d;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < d; ++j) sum += xr[j];
    const float m = sum / static_cast<float>(d);
    float squares = 0.0f;
#pragma omp simd reduction(+ : squares)
    for (int64_t j = 0; j < d; ++j) squares += (xr[j] - m) * (xr[j] - m);
    const float inv = 1.0f / std::sqrt(squares / static_cast<float>(d) + epsilon);
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) yr[j] = (xr[j] - m) * inv * g[j] + b[j];
    mean.data<float>()[r] = m;
    inv_std.data<float>()[r] = inv;
  }
  return {out, mean, inv_std};
}

// d x = inv_std * (h - mean(h) - xhat * mean(h * xhat)) with h = d out * scale, xhat the normed
// x; d scale = sum over rows of d out * xhat, d bias = sum of d out.
std::vector<paddle::Tensor> LayerNormBackward(const paddle::Tensor& x, const paddle::Tensor& scale,
                                              const paddle::Tensor&, const paddle::Tensor& mean, const paddle::Tensor& inv_std,
                                              const paddle::Tensor& grad_out, float) {
  const char* op = "pfc_layer_norm_grad";
  CheckFloat32(grad_out, op, "grad_out");
  const int64_t d = scale.numel();
  const int64_t rows = RowsOf(x, d, op);
  PD_CHECK(grad_out.shape() == x.shape(), op, ": grad_out must be shaped like x");
  auto grad_x = paddle::empty(x.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto grad_scale = paddle::empty(scale.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto grad_bias = paddle::empty(scale.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  const float* xs = x.data<float>();
  const float* g = scale.data<float>();
  const float* dys = grad_out.data<float>();
  float* dxs = grad_x.data<float>();
  ColumnSums scale_sums(d), bias_sums(d);
  std::vector<float> xhat(d);
  for (int64_t r = 0; r < rows; ++r) {
    const float m = mean.data<float>()[r];
    const float inv = inv_std.data<float>()[r];
    const float* xr = xs + r * d;
    const float* dy = dys + r * d;
    float* dx = dxs + r * d;
    float* ds = scale_sums.chunk();
    float* db = bias_sums.chunk();
    float h_sum = 0.0f, hx_sum = 0.0f;
#pragma omp simd reduction(+ : h_sum, hx_sum)
    for (int64_t j = 0; j < d; ++j) {
      xhat[j] = (xr[j] - m) * inv;
      const float h = dy[j] * g[j];
      h_sum += h;
      hx_sum += h * xhat[j];
      ds[j] += dy[j] * xhat[j];
      db[j] += dy[j];
    }
    const float h_mean = h_sum / static_cast<float>(d);
    const float hx_mean = hx_sum / static_cast<float>(d);
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) dx[j] = inv * (dy[j] * g[j] - h_mean - xhat[j] * hx_mean);
    scale_sums.RowDone();
    bias_sums.RowDone();
  }
  scale_sums.Store(grad_scale.data<float>());
  bias_sums.Store(grad_bias.data<float>());
  return {grad_x, grad_scale, grad_bias};
}

std::vector<std::vector<int64_t>> LayerNormShape(const std::vector<int64_t>& x, const std::vector<int64_t>&,
                                                 const std::vector<int64_t>&) {
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < x.size(); ++i) rows = (rows < 0 || x[i] < 0) ? -1 : rows * x[i];
  return {x, {rows}, {rows}};
}

std::vector<paddle::DataType> LayerNormDtype(const paddle::DataType& x, const paddle::DataType&,
                                             const paddle::DataType&) {
  return {x, x, x};
}

std::vector<std::vector<int64_t>> LayerNormGradShape(const std::vector<int64_t>& x, const std::vector<int64_t>& scale,
                                                     const std::vector<int64_t>&, const std::vector<int64_t>&, const std::vector<int64_t>&,
                                                     const std::vector<int64_t>&) {
  return {x, scale, scale};
}

std::vector<paddle::DataType> LayerNormGradDtype(const paddle::DataType& x, const paddle::DataType&,
                                                 const paddle::DataType&, const paddle::DataType&, const paddle::DataType&,
                                                 const paddle::DataType&) {
  return {x, x, x};
}

PD_BUILD_OP(pfc_layer_norm)
    .Inputs({"X", "Scale", "Bias"})
    .Outputs({"Out", "SavedMean", "SavedInvStd"})
    .Attrs({"epsilon: float"})
    .SetKernelFn(PD_KERNEL(LayerNormForward))
    .SetInferShapeFn(PD_INFER_SHAPE(LayerNormShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(LayerNormDtype));

PD_BUILD_GRAD_OP(pfc_layer_norm)
    .Inputs({"X", "Scale", "Bias", "SavedMean", "SavedInvStd", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X"), paddle::Grad("Scale"), paddle::Grad("Bias")})
    .Attrs({"epsilon: float"})
    .SetKernelFn(PD_KERNEL(LayerNormBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(LayerNormGradShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(LayerNormGradDtype));

// ---------------------------------------------------------------------------------------------
// A Linear's bias: out = x + bias over the last axis, then with `relu6` min(max(., 0), 6).
std::vector<paddle::Tensor> BiasActForward(const paddle::Tensor& x, const paddle::Tensor& bias, bool relu6) {
  const char* op = "pfc_bias_act";
  CheckFloat32(x, op, "x");
  CheckFloat32(bias, op, "bias");
  const int64_t c = bias.numel();
  const int64_t rows = RowsOf(x, c, op);
  auto out = paddle::empty(x.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  const float* xs = x.data<float>();
  const float* b = bias.data<float>();
  float* y = out.data<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = xs + r * c;
    float* yr = y + r * c;
    if (relu6) {
#pragma omp simd
      for (int64_t j = 0; j < c; ++j) yr[j] = std::min(std::max(xr[j] + b[j], 0.0f), 6.0f);
    } else {
#pragma omp simd
      for (int64_t j = 0; j < c; ++j) yr[j] = xr[j] + b[j];
    }
  }
  return {out};
}

// d x = d out (with `relu6`: where 0 < out < 6, else 0); d bias = the column sums of d x.
std::vector<paddle::Tensor> BiasActBackward(const paddle::Tensor& bias, const paddle::Tensor& out,
                                            const paddle::Tensor& grad_out, bool relu6) {
  const char* op = "pfc_bias_act_grad";
  CheckFloat32(grad_out, op, "grad_out");
  const int64_t c = bias.numel();
  const int64_t rows = RowsOf(grad_out, c, op);
  auto grad_x = paddle::empty(grad_out.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto grad_bias = paddle::empty(bias.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  const float* ys = out.data<float>();
  const float* dys = grad_out.data<float>();
  float* dxs = grad_x.data<float>();
  ColumnSums sums(c);
  for (int64_t r = 0; r < rows; ++r) {
    const float* yr = ys + r * c;
    const float* dy = dys + r * c;
    float* dx = dxs + r * c;
    float* db = sums.chunk();
    if (relu6) {
#pragma omp simd
      for (int64_t j = 0; j < c; ++j) {
        dx[j] = (yr[j] > 0.0f && yr[j] < 6.0f) ? dy[j] : 0.0f;
        db[j] += dx[j];
      }
    } else {
#pragma omp simd
      for (int64_t j = 0; j < c; ++j) {
        dx[j] = dy[j];
        db[j] += dy[j];
      }
    }
    sums.RowDone();
  }
  sums.Store(grad_bias.data<float>());
  return {grad_x, grad_bias};
}

std::vector<std::vector<int64_t>> BiasActShape(const std::vector<int64_t>& x, const std::vector<int64_t>&) {
  return {x};
}

std::vector<paddle::DataType> BiasActDtype(const paddle::DataType& x, const paddle::DataType&) { return {x}; }

std::vector<std::vector<int64_t>> BiasActGradShape(const std::vector<int64_t>& bias, const std::vector<int64_t>& out,
                                                   const std::vector<int64_t>&) {
  return {out, bias};
}

std::vector<paddle::DataType> BiasActGradDtype(const paddle::DataType& bias, const paddle::DataType& out,
                                               const paddle::DataType&) {
  return {out, bias};
}

PD_BUILD_OP(pfc_bias_act)
    .Inputs({"X", "Bias"})
    .Outputs({"Out"})
    .Attrs({"relu6: bool"})
    .SetKernelFn(PD_KERNEL(BiasActForward))
    .SetInferShapeFn(PD_INFER_SHAPE(BiasActShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(BiasActDtype));

PD_BUILD_GRAD_OP(pfc_bias_act)
    .Inputs({"Bias", "Out", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X"), paddle::Grad("Bias")})
    .Attrs({"relu6: bool"})
    .SetKernelFn(PD_KERNEL(BiasActBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(BiasActGradShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(BiasActGradDtype));

// ---------------------------------------------------------------------------------------------
// A residual branch's end: out = x + keep[n] * (h + bias), h a Linear's product [N, ..., C], bias
// [C], keep [N] each sample's drop-path factor (0 or 1 / (1 - p); ones without drop path).
namespace {

// (samples, rows a sample, columns) of x and h, checked alike.
std::array<int64_t, 3> ResidualShape(const paddle::Tensor& x, const paddle::Tensor& h, const paddle::Tensor& bias,
                                     const paddle::Tensor& keep, const char* op) {
  CheckFloat32(h, op, "h");
  CheckFloat32(bias, op, "bias");
  CheckFloat32(keep, op, "keep");
  PD_CHECK(x.shape() == h.shape() && !x.shape().empty(), op, ": x and h must have one shape");
  const int64_t c = bias.numel();
  const int64_t rows = RowsOf(x, c, op);
  const int64_t n = x.shape()[0];
  PD_CHECK(keep.numel() == n, op, ": keep must hold one factor a sample");
  return {n, n == 0 ? 0 : rows / n, c};
}

}  // namespace

std::vector<paddle::Tensor> BiasResidualForward(const paddle::Tensor& x, const paddle::Tensor& h,
                                                const paddle::Tensor& bias, const paddle::Tensor& keep) {
  const char* op = "pfc_bias_residual";
  CheckFloat32(x, op, "x");
  const auto [n, rows, c] = ResidualShape(x, h, bias, keep, op);
  auto out = paddle::empty(x.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  const float* b = bias.data<float>();
  for (int64_t s = 0; s < n; ++s) {
    const float factor = keep.data<float>()[s];
    const int64_t start = s * rows * c;
    const float* xs = x.data<float>() + start;
    const float* hs = h.data<float>() + start;
    float* ys = out.data<float>() + start;
    for (int64_t r = 0; r < rows; ++r) {
#pragma omp simd
      for (int64_t j = 0; j < c; ++j) ys[r * c + j] = xs[r * c + j] + factor * (hs[r * c + j] + b[j]);
    }
  }
  return {out};
}

// d x = d out; d h = keep[n] * d out; d bias = the column sums of d h. No gradient for keep.
std::vector<paddle::Tensor> BiasResidualBackward(const paddle::Tensor& bias, const paddle::Tensor& keep,
                                                 const paddle::Tensor& grad_out) {
  const char* op = "pfc_bias_residual_grad";
  CheckFloat32(grad_out, op, "grad_out");
  const auto [n, rows, c] = ResidualShape(grad_out, grad_out, bias, keep, op);
  auto grad_x = paddle::empty(grad_out.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto grad_h = paddle::empty(grad_out.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto grad_bias = paddle::empty(bias.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  ColumnSums sums(c);
  for (int64_t s = 0; s < n; ++s) {
    const float factor = keep.data<float>()[s];
    const int64_t start = s * rows * c;
    const float* dys = grad_out.data<float>() + start;
    float* dxs = grad_x.data<float>() + start;
    float* dhs = grad_h.data<float>() + start;
    for (int64_t r = 0; r < rows; ++r) {
      const float* dy = dys + r * c;
      float* dx = dxs + r * c;
      float* dh = dhs + r * c;
      float* db = sums.chunk();
#pragma omp simd
      for (int64_t j = 0; j < c; ++j) {
        dx[j] = dy[j];
        dh[j] = factor * dy[j];
        db[j] += dh[j];
      }
      sums.RowDone();
    }
  }
  sums.Store(grad_bias.data<float>());
  return {grad_x, grad_h, grad_bias};
}

std::vector<std::vector<int64_t>> BiasResidualShape(const std::vector<int64_t>& x, const std::vector<int64_t>&,
                                                    const std::vector<int64_t>&, const std::vector<int64_t>&) {
  return {x};
}

std::vector<paddle::DataType> BiasResidualDtype(const paddle::DataType& x, const paddle::DataType&,
                                                const paddle::DataType&, const paddle::DataType&) {
  return {x};
}

std::vector<std::vector<int64_t>> BiasResidualGradShape(const std::vector<int64_t>& bias, const std::vector<int64_t>&,
                                                        const std::vector<int64_t>& grad_out) {
  return {grad_out, grad_out, bias};
}

std::vector<paddle::DataType> BiasResidualGradDtype(const paddle::DataType& bias, const paddle::DataType&,
                                                    const paddle::DataType& grad_out) {
  return {grad_out, grad_out, bias};
}

PD_BUILD_OP(pfc_bias_residual)
    .Inputs({"X", "H", "Bias", "Keep"})
    .Outputs({"Out"})
    .SetKernelFn(PD_KERNEL(BiasResidualForward))
    .SetInferShapeFn(PD_INFER_SHAPE(BiasResidualShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(BiasResidualDtype));

PD_BUILD_GRAD_OP(pfc_bias_residual)
    .Inputs({"Bias", "Keep", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X"), paddle::Grad("H"), paddle::Grad("Bias")})
    .SetKernelFn(PD_KERNEL(BiasResidualBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(BiasResidualGradShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(BiasResidualGradDtype));

// ---------------------------------------------------------------------------------------------
// Tokens picked per sample: out[n, k, :] = x[n, index[n, k], :], x [N, L, D], index [N, K] int64
// (each in [0, L)); its gradient adds d out's rows into zeros at those places.
namespace {

std::array<int64_t, 4> GatherShape(const std::vector<int64_t>& x, const paddle::Tensor& index, const char* op) {
  PD_CHECK(x.size() == 3, op, ": x must be [N, L, D]");
  PD_CHECK(index.dtype() == paddle::DataType::INT64 && index.is_cpu(), op, ": index must be a CPU int64 tensor");
  PD_CHECK(index.shape().size() == 2 && index.shape()[0] == x[0], op, ": index must be [N, K]");
  return {x[0], x[1], x[2], index.shape()[1]};
}

}  // namespace

std::vector<paddle::Tensor> GatherTokensForward(const paddle::Tensor& x, const paddle::Tensor& index) {
  const char* op = "pfc_gather_tokens";
  CheckFloat32(x, op, "x");
  const auto [n, l, d, k] = GatherShape(x.shape(), index, op);
  auto out = paddle::empty({n, k, d}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  const int64_t* ids = index.data<int64_t>();
  for (int64_t s = 0; s < n; ++s) {
    for (int64_t j = 0; j < k; ++j) {
      const int64_t at = ids[s * k + j];
      PD_CHECK(at >= 0 && at < l, op, ": index ", at, " of sample ", s, " is outside [0, ", l, ")");
      std::memcpy(out.data<float>() + (s * k + j) * d, x.data<float>() + (s * l + at) * d, d * sizeof(float));
    }
  }
  return {out};
}

std::vector<paddle::Tensor> GatherTokensBackward(const paddle::Tensor& x, const paddle::Tensor& index,
                                                 const paddle::Tensor& grad_out) {
  const char* op = "pfc_gather_tokens_grad";
  CheckFloat32(grad_out, op, "grad_out");
  const auto [n, l, d, k] = GatherShape(x.shape(), index, op);
  PD_CHECK(grad_out.shape() == std::vector<int64_t>({n, k, d}), op, ": grad_out must be [N, K, D]");
  auto grad_x = paddle::empty(x.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  float* dx = grad_x.data<float>();
  std::fill(dx, dx + n * l * d, 0.0f);
  const int64_t* ids = index.data<int64_t>();
  for (int64_t s = 0; s < n; ++s) {
    for (int64_t j = 0; j < k; ++j) {
      const int64_t at = ids[s * k + j];
      PD_CHECK(at >= 0 && at < l, op, ": index ", at, " of sample ", s, " is outside [0, ", l, ")");
      const float* dy = grad_out.data<float>() + (s * k + j) * d;
      float* row = dx + (s * l + at) * d;
#pragma omp simd
      for (int64_t c = 0; c < d; ++c) row[c] += dy[c];
    }
  }
  return {grad_x};
}

std::vector<std::vector<int64_t>> GatherTokensShape(const std::vector<int64_t>& x, const std::vector<int64_t>& index) {
  return {{x[0], index.size() == 2 ? index[1] : -1, x.size() == 3 ? x[2] : -1}};
}

std::vector<paddle::DataType> GatherTokensDtype(const paddle::DataType& x, const paddle::DataType&) { return {x}; }

std::vector<std::vector<int64_t>> GatherTokensGradShape(const std::vector<int64_t>& x, const std::vector<int64_t>&,
                                                        const std::vector<int64_t>&) {
  return {x};
}

std::vector<paddle::DataType> GatherTokensGradDtype(const paddle::DataType& x, const paddle::DataType&,
                                                    const paddle::DataType&) {
  return {x};
}

PD_BUILD_OP(pfc_gather_tokens)
    .Inputs({"X", "Index"})
    .Outputs({"Out"})
    .SetKernelFn(PD_KERNEL(GatherTokensForward))
    .SetInferShapeFn(PD_INFER_SHAPE(GatherTokensShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(GatherTokensDtype));

PD_BUILD_GRAD_OP(pfc_gather_tokens)
    .Inputs({"X", "Index", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X")})
    .SetKernelFn(PD_KERNEL(GatherTokensBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(GatherTokensGradShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(GatherTokensGradDtype));

// ---------------------------------------------------------------------------------------------
// y = softmax(scale * x) of one row of t floats, its maximum subtracted first (y may be x).
inline void SoftmaxRow(const float* x, float* y, int64_t t, float scale) {
  float top = -INFINITY;
#pragma omp simd reduction(max : top)
  for (int64_t j = 0; j < t; ++j) top = std::max(top, x[j] * scale);
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < t; ++j) {
    y[j] = ExpNonPositive(x[j] * scale - top);
    sum += y[j];
  }
  const float inv = 1.0f / sum;
#pragma omp simd
  for (int64_t j = 0; j < t; ++j) y[j] *= inv;
}

// dx = scale * y * (dy - sum(dy * y)) of one row of t floats (dx may be dy).
inline void SoftmaxGradRow(const float* y, const float* dy, float* dx, int64_t t, float scale) {
  float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
  for (int64_t j = 0; j < t; ++j) dot += dy[j] * y[j];
#pragma omp simd
  for (int64_t j = 0; j < t; ++j) dx[j] = scale * y[j] * (dy[j] - dot);
}

// out = softmax over the last axis of scale * x (each row's maximum subtracted first).
std::vector<paddle::Tensor> ScaledSoftmaxForward(const paddle::Tensor& x, float scale) {
  const char* op = "pfc_scaled_softmax";
  CheckFloat32(x, op, "x");
  PD_CHECK(!x.shape().empty() && x.shape().back() > 0, op, ": x needs a non-empty last axis");
  const int64_t t = x.shape().back();
  const int64_t rows = x.numel() / t;
  auto out = paddle::empty(x.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  const float* xs = x.data<float>();
  float* ys = out.data<float>();
  for (int64_t r = 0; r < rows; ++r) SoftmaxRow(xs + r * t, ys + r * t, t, scale);
  return {out};
}

// d x = scale * out * (d out - sum_j d out_j * out_j), row by row.
std::vector<paddle::Tensor> ScaledSoftmaxBackward(const paddle::Tensor& out, const paddle::Tensor& grad_out,
                                                  float scale) {
  const char* op = "pfc_scaled_softmax_grad";
  CheckFloat32(grad_out, op, "grad_out");
  PD_CHECK(grad_out.shape() == out.shape(), op, ": grad_out must be shaped like out");
  const int64_t t = out.shape().back();
  const int64_t rows = out.numel() / t;
  auto grad_x = paddle::empty(out.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  const float* ys = out.data<float>();
  const float* dys = grad_out.data<float>();
  float* dxs = grad_x.data<float>();
  for (int64_t r = 0; r < rows; ++r) SoftmaxGradRow(ys + r * t, dys + r * t, dxs + r * t, t, scale);
  return {grad_x};
}

std::vector<std::vector<int64_t>> SoftmaxShape(const std::vector<int64_t>& x) { return {x}; }

std::vector<paddle::DataType> SoftmaxDtype(const paddle::DataType& x) { return {x}; }

std::vector<std::vector<int64_t>> SoftmaxGradShape(const std::vector<int64_t>& out, const std::vector<int64_t>&) {
  return {out};
}

std::vector<paddle::DataType> SoftmaxGradDtype(const paddle::DataType& out, const paddle::DataType&) {
  return {out};
}

PD_BUILD_OP(pfc_scaled_softmax)
    .Inputs({"X"})
    .Outputs({"Out"})
    .Attrs({"scale: float"})
    .SetKernelFn(PD_KERNEL(ScaledSoftmaxForward))
    .SetInferShapeFn(PD_INFER_SHAPE(SoftmaxShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(SoftmaxDtype));

PD_BUILD_GRAD_OP(pfc_scaled_softmax)
    .Inputs({"Out", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X")})
    .Attrs({"scale: float"})
    .SetKernelFn(PD_KERNEL(ScaledSoftmaxBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(SoftmaxGradShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(SoftmaxGradDtype));

// ---------------------------------------------------------------------------------------------
// Multi-head self-attention from qkv [N, T, 3D] (q, k, v side by side, head h in columns
// [h*d, (h+1)*d) of each, d = D / heads): per sample and head P = softmax(scale * q k^T) [T, T]
// and out[:, h*d:(h+1)*d] = P v, out [N, T, D]; P kept for the backward, its rows padded with
// zeros to Tp = T rounded up to 16 (Probs [N, heads, T, Tp]: whole vectors a row for the AVX-512 code).
namespace {

using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                       int);
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

// cblas_sgemm of the MKL Paddle's float32 matmul calls (as center_ops.cc finds it).
Sgemm LoadSgemm(const std::string& library) { return RequiredSymbol<Sgemm>(library, "cblas_sgemm"); }

struct AttentionShape {
  int64_t n, t, dim, heads, head_dim;
};

// rows x cols of a matrix with leading dimension ld copied to a contiguous one: a head's
// columns of qkv packed before its products (small per-head products run faster on contiguous
// operands than on strided views).
void Pack(const float* src, int64_t rows, int64_t cols, int64_t ld, float* dst) {
  for (int64_t r = 0; r < rows; ++r) std::memcpy(dst + r * cols, src + r * ld, cols * sizeof(float));
}

int64_t PaddedRow(int64_t t) { return (t + 15) / 16 * 16; }

AttentionShape CheckedAttention(const paddle::Tensor& qkv, int heads, const char* op) {
  CheckFloat32(qkv, op, "qkv");
  const auto& shape = qkv.shape();
  PD_CHECK(shape.size() == 3 && shape[2] % 3 == 0, op, ": qkv must be [N, T, 3D]");
  const int64_t dim = shape[2] / 3;
  PD_CHECK(heads > 0 && dim % heads == 0, op, ": D = ", dim, " is not a multiple of heads = ", heads);
  return {shape[0], shape[1], dim, heads, dim / heads};
}

// softmax(scale * row) over the first t entries of each of `rows` rows (stride ld, a multiple of
// 16), in place, zeros past t.
void SoftmaxRowsInPlace(float* p, int64_t rows, int64_t t, int64_t ld, float scale) {
#if defined(__AVX512F__)
  attention_avx512::SoftmaxRows(p, rows, t, ld, scale);
#else
  for (int64_t r = 0; r < rows; ++r) {
    float* row = p + r * ld;
    SoftmaxRow(row, row, t, scale);
    std::fill(row + t, row + ld, 0.0f);
  }
#endif
}

// d S = scale * P * (d P - sum(d P * P)) in place of d P, row by row (both at stride ld, a multiple
// of 16; P zero past t).
void SoftmaxGradRowsInPlace(const float* p, float* dp, int64_t rows, int64_t ld, float scale) {
#if defined(__AVX512F__)
  attention_avx512::SoftmaxGradRows(p, dp, rows, ld, scale);
#else
  for (int64_t r = 0; r < rows; ++r) SoftmaxGradRow(p + r * ld, dp + r * ld, dp + r * ld, ld, scale);
#endif
}

// The forward by MKL's cblas_sgemm on each head's packed q, k, v; P V written into out's columns.
void ForwardBlas(const AttentionShape& a, const float* qkv, float scale, const std::string& library, float* out,
                 float* probs) {
  const Sgemm sgemm = LoadSgemm(library);
  const int t = static_cast<int>(a.t), d = static_cast<int>(a.head_dim);
  const int ld_out = static_cast<int>(a.dim), ld_p = static_cast<int>(PaddedRow(a.t));
  const int64_t block = a.t * a.head_dim;
  std::vector<float> packed(3 * block);
  float* q = packed.data();
  float* k = q + block;
  float* v = k + block;
  for (int64_t s = 0; s < a.n; ++s) {
    for (int64_t h = 0; h < a.heads; ++h) {
      const float* head = qkv + s * a.t * 3 * a.dim + h * a.head_dim;
      for (int part = 0; part < 3; ++part) Pack(head + part * a.dim, a.t, a.head_dim, 3 * a.dim, q + part * block);
      float* p = probs + (s * a.heads + h) * a.t * ld_p;
      sgemm(kRowMajor, kNoTrans, kTrans, t, t, d, 1.0f, q, d, k, d, 0.0f, p, ld_p);
      SoftmaxRowsInPlace(p, a.t, a.t, ld_p, scale);
      sgemm(kRowMajor, kNoTrans, kNoTrans, t, d, t, 1.0f, p, ld_p, v, d, 0.0f, out + s * a.t * a.dim + h * a.head_dim,
            ld_out);
    }
  }
}

// Per sample and head: d v = P^T d o; d P = d o v^T; d S = scale * P * (d P - rowsum(d P * P));
// d q = d S k; d k = d S^T q, each written into its columns of d qkv by the product. MKL's
// cblas_sgemm on packed heads (q, k, v and d out copied contiguous: faster products than on views).
void BackwardBlas(const AttentionShape& a, const float* qkv, const float* probs, const float* grad_out, float scale,
                  const std::string& library, float* grad_qkv) {
  const Sgemm sgemm = LoadSgemm(library);
  const int t = static_cast<int>(a.t), d = static_cast<int>(a.head_dim), ld_p = static_cast<int>(PaddedRow(a.t));
  const int ld_grad = static_cast<int>(3 * a.dim);
  const int64_t block = a.t * a.head_dim;
  std::vector<float> dp(a.t * ld_p), packed(4 * block);
  float* q = packed.data();  // q, k, v, d out
  float* k = q + block;
  float* v = k + block;
  float* dout = v + block;
  for (int64_t s = 0; s < a.n; ++s) {
    for (int64_t h = 0; h < a.heads; ++h) {
      const int64_t offset = s * a.t * 3 * a.dim + h * a.head_dim;
      for (int part = 0; part < 3; ++part) Pack(qkv + offset + part * a.dim, a.t, a.head_dim, 3 * a.dim, q + part * block);
      Pack(grad_out + s * a.t * a.dim + h * a.head_dim, a.t, a.head_dim, a.dim, dout);
      const float* p = probs + (s * a.heads + h) * a.t * ld_p;
      float* grad_q = grad_qkv + offset;
      sgemm(kRowMajor, kTrans, kNoTrans, t, d, t, 1.0f, p, ld_p, dout, d, 0.0f, grad_q + 2 * a.dim, ld_grad);
      sgemm(kRowMajor, kNoTrans, kTrans, t, t, d, 1.0f, dout, d, v, d, 0.0f, dp.data(), ld_p);
      SoftmaxGradRowsInPlace(p, dp.data(), a.t, ld_p, scale);
      sgemm(kRowMajor, kNoTrans, kNoTrans, t, d, t, 1.0f, dp.data(), ld_p, k, d, 0.0f, grad_q, ld_grad);
      sgemm(kRowMajor, kTrans, kNoTrans, t, d, t, 1.0f, dp.data(), ld_p, q, d, 0.0f, grad_q + a.dim, ld_grad);
    }
  }
}

}  // namespace

std::vector<paddle::Tensor> AttentionForward(const paddle::Tensor& qkv, int heads, float scale,
                                             const std::string& library) {
  const AttentionShape a = CheckedAttention(qkv, heads, "pfc_attention");
  auto out = paddle::empty({a.n, a.t, a.dim}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto probs = paddle::empty({a.n, a.heads, a.t, PaddedRow(a.t)}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  if (a.n * a.t == 0) return {out, probs};
  ForwardBlas(a, qkv.data<float>(), scale, library, out.data<float>(), probs.data<float>());
  return {out, probs};
}

std::vector<paddle::Tensor> AttentionBackward(const paddle::Tensor& qkv, const paddle::Tensor& probs,
                                              const paddle::Tensor& grad_out, int heads, float scale,
                                              const std::string& library) {
  const AttentionShape a = CheckedAttention(qkv, heads, "pfc_attention_grad");
  CheckFloat32(grad_out, "pfc_attention_grad", "grad_out");
  PD_CHECK(grad_out.shape() == std::vector<int64_t>({a.n, a.t, a.dim}), "pfc_attention_grad: grad_out must be [N, T, D]");
  PD_CHECK(probs.shape() == std::vector<int64_t>({a.n, a.heads, a.t, PaddedRow(a.t)}),
           "pfc_attention_grad: probs must be [N, heads, T, Tp]");
  auto grad_qkv = paddle::empty(qkv.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  if (a.n * a.t == 0) return {grad_qkv};
  BackwardBlas(a, qkv.data<float>(), probs.data<float>(), grad_out.data<float>(), scale, library, grad_qkv.data<float>());
  return {grad_qkv};
}

std::vector<std::vector<int64_t>> AttentionShapeFn(const std::vector<int64_t>& qkv, int heads, float,
                                                   const std::string&) {
  return {{qkv[0], qkv[1], qkv[2] < 0 ? -1 : qkv[2] / 3}, {qkv[0], heads, qkv[1], qkv[1] < 0 ? -1 : PaddedRow(qkv[1])}};
}

std::vector<paddle::DataType> AttentionDtype(const paddle::DataType& qkv, int, float, const std::string&) {
  return {qkv, qkv};
}

std::vector<std::vector<int64_t>> AttentionGradShape(const std::vector<int64_t>& qkv, const std::vector<int64_t>&,
                                                     const std::vector<int64_t>&, int, float, const std::string&) {
  return {qkv};
}

std::vector<paddle::DataType> AttentionGradDtype(const paddle::DataType& qkv, const paddle::DataType&,
                                                 const paddle::DataType&, int, float, const std::string&) {
  return {qkv};
}

PD_BUILD_OP(pfc_attention)
    .Inputs({"QKV"})
    .Outputs({"Out", "Probs"})
    .Attrs({"heads: int", "scale: float", "library: std::string"})
    .SetKernelFn(PD_KERNEL(AttentionForward))
    .SetInferShapeFn(PD_INFER_SHAPE(AttentionShapeFn))
    .SetInferDtypeFn(PD_INFER_DTYPE(AttentionDtype));

PD_BUILD_GRAD_OP(pfc_attention)
    .Inputs({"QKV", "Probs", paddle::Grad("Out")})
    .Outputs({paddle::Grad("QKV")})
    .Attrs({"heads: int", "scale: float", "library: std::string"})
    .SetKernelFn(PD_KERNEL(AttentionBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(AttentionGradShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(AttentionGradDtype));
