// Training-mode batch normalisation of NCHW tensors, alone or followed by a channel PReLU; input
// and output each float32, or bfloat16 from and to the bfloat16 convolutions around it.
// Channels go in blocks whose planes are ~16 KB contiguous per sample (one channel of a 56x56 map,
// 16 of a 14x14 one): the block (512 KB at batch 32) stays in L2 between the statistics pass and
// the normalising pass, so memory sees one read and one write of x forward, two reads and one
// write backward, in runs long enough to prefetch. Paddle 3.3's CPU batch_norm with the PReLU
// after it took ~17 % of mobilefacenet's training step (2026-11-25, docs/paddle-notes.md).
// Built on first use by paddle_pfc/kernels/native_ops.py, which states the contracts.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "paddle/extension.h"

namespace {

constexpr int64_t kBlockFloats = 4096;  // a block's contiguous run per sample (16 KB), at least one plane

struct Layout {
  int64_t batch, channels, inner;
  int64_t count() const { return batch * inner; }  // values a channel's statistics average over
  int64_t block() const { return std::clamp<int64_t>(kBlockFloats / inner, 1, channels); }
  int64_t offset(int64_t n, int64_t c) const { return (n * channels + c) * inner; }
};

Layout CheckInputs(const paddle::Tensor& x, const std::vector<const paddle::Tensor*>& per_channel) {
  PD_CHECK(x.is_cpu() && (x.dtype() == paddle::DataType::FLOAT32 || x.dtype() == paddle::DataType::BFLOAT16),
           "pfc_batch_norm takes float32 or bfloat16 CPU x");
  const auto& shape = x.shape();
  PD_CHECK(shape.size() >= 2, "pfc_batch_norm: x must be [N, C, ...]");
  Layout l{shape[0], shape[1], 1};
  for (size_t d = 2; d < shape.size(); ++d) l.inner *= shape[d];
  PD_CHECK(l.count() > 0, "pfc_batch_norm: x has no values per channel");
  for (const paddle::Tensor* t : per_channel) {
    PD_CHECK(t->is_cpu() && t->dtype() == paddle::DataType::FLOAT32 && t->numel() == l.channels,
             "pfc_batch_norm: scale, bias, alpha, mean and variance must be float32 [C] on CPU");
  }
  return l;
}

// y = x * gain + shift (gain = scale * inv_std, shift = bias - mean * gain), then the PReLU when
// a slope is given: the forward and the backward's recomputation use this one expression, so
// both see the same y (and take the same side of the PReLU).
inline float Affine(float x, float gain, float shift) { return x * gain + shift; }

// A channel's gain and shift from its saved (float32) mean and inverse std: the forward and the
// backward both take them from here, so the backward's y is the forward's bit for bit.
inline void GainShift(float scale, float bias, float mean, float inv_std, float* gain, float* shift) {
  *gain = static_cast<float>(static_cast<double>(scale) * inv_std);
  *shift = static_cast<float>(bias - static_cast<double>(mean) * scale * inv_std);
}

// x, the output and their gradients are float32, or bfloat16 next to a bfloat16 convolution: the
// upper half of a float32, stored rounded to nearest even (a NaN kept a NaN), as Paddle's cast.
inline float Load(float v) { return v; }
inline float Load(uint16_t v) { return __builtin_bit_cast(float, static_cast<uint32_t>(v) << 16); }
inline void Store(float* p, float v) { *p = v; }
inline void Store(uint16_t* p, float v) {
  const uint32_t bits = __builtin_bit_cast(uint32_t, v);
  const uint32_t rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
  *p = static_cast<uint16_t>(v != v ? (bits >> 16) | 0x40u : rounded);
}
template <typename T>
T* Data(paddle::Tensor& t) { return static_cast<T*>(t.data()); }
template <typename T>
const T* Data(const paddle::Tensor& t) { return static_cast<const T*>(t.data()); }

// x and Out each float32 (float) or bfloat16 (uint16_t). Returns Out, SavedMean, SavedInvStd
// (float32); updates the running statistics in place. The moments come from one pass of sums of
// d = x - x[0, c, 0] and d * d (float per plane, float64 across planes): the shift keeps the
// variance's cancellation at the scale of the data's own spread.
template <typename In, typename Out>
std::vector<paddle::Tensor> Forward(const paddle::Tensor& x, const paddle::Tensor& scale, const paddle::Tensor& bias,
                                    const paddle::Tensor* alpha, paddle::Tensor& running_mean,
                                    paddle::Tensor& running_var, float momentum, float epsilon) {
  std::vector<const paddle::Tensor*> per_channel{&scale, &bias, &running_mean, &running_var};
  if (alpha != nullptr) per_channel.push_back(alpha);
  const Layout l = CheckInputs(x, per_channel);
  constexpr bool kBf16 = std::is_same_v<Out, uint16_t>;
  auto out = paddle::empty(x.shape(), kBf16 ? paddle::DataType::BFLOAT16 : paddle::DataType::FLOAT32,
                           paddle::CPUPlace());
  auto saved_mean = paddle::empty({l.channels}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto saved_inv_std = paddle::empty({l.channels}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  const In* in = Data<In>(x);
  const float* gamma = scale.data<float>();
  const float* beta = bias.data<float>();
  const float* slopes = alpha != nullptr ? alpha->data<float>() : nullptr;
  Out* y = Data<Out>(out);
  float* rm = running_mean.data<float>();
  float* rv = running_var.data<float>();
  const double count = static_cast<double>(l.count());
  const int64_t block = l.block();
  std::vector<double> sums(block), squares(block);
  std::vector<float> origin(block), gains(block), shifts(block);
  for (int64_t c0 = 0; c0 < l.channels; c0 += block) {
    const int64_t k = std::min(block, l.channels - c0);
    for (int64_t j = 0; j < k; ++j) {
      origin[j] = Load(in[l.offset(0, c0 + j)]);
      sums[j] = squares[j] = 0.0;
    }
    for (int64_t n = 0; n < l.batch; ++n) {
      for (int64_t j = 0; j < k; ++j) {
        const In* p = in + l.offset(n, c0 + j);
        const float o = origin[j];
        float s = 0.0f, q = 0.0f;
#pragma omp simd reduction(+ : s, q)
        for (int64_t i = 0; i < l.inner; ++i) {
          const float d = Load(p[i]) - o;
          s += d;
          q += d * d;
        }
        sums[j] += s;
        squares[j] += q;
      }
    }
    for (int64_t j = 0; j < k; ++j) {
      const int64_t c = c0 + j;
      const double shifted_mean = sums[j] / count;
      const double mean = origin[j] + shifted_mean;
      const double variance = std::max(squares[j] / count - shifted_mean * shifted_mean, 0.0);
      const double inv_std = 1.0 / std::sqrt(variance + static_cast<double>(epsilon));
      saved_mean.data<float>()[c] = static_cast<float>(mean);
      saved_inv_std.data<float>()[c] = static_cast<float>(inv_std);
      rm[c] = static_cast<float>(momentum * rm[c] + (1.0 - momentum) * mean);
      rv[c] = static_cast<float>(momentum * rv[c] + (1.0 - momentum) * variance);
      GainShift(gamma[c], beta[c], saved_mean.data<float>()[c], saved_inv_std.data<float>()[c], &gains[j], &shifts[j]);
    }
    for (int64_t n = 0; n < l.batch; ++n) {
      for (int64_t j = 0; j < k; ++j) {
        const In* p = in + l.offset(n, c0 + j);
        Out* q = y + l.offset(n, c0 + j);
        const float gain = gains[j], shift = shifts[j];
        if (slopes == nullptr) {
#pragma omp simd
          for (int64_t i = 0; i < l.inner; ++i) Store(q + i, Affine(Load(p[i]), gain, shift));
        } else {
          const float slope = slopes[c0 + j];
#pragma omp simd
          for (int64_t i = 0; i < l.inner; ++i) {
            const float v = Affine(Load(p[i]), gain, shift);
            Store(q + i, v > 0.0f ? v : slope * v);
          }
        }
      }
    }
  }
  return {out, saved_mean, saved_inv_std};
}

// Returns dX, dScale, dBias (and dAlpha when `alpha` is given). With xhat = (x - mean) * inv_std,
// y = scale * xhat + bias and dy = dOut (times alpha where y <= 0): dBias = sum dy,
// dScale = sum dy * xhat, dAlpha = sum dOut * y where y <= 0,
// dX = scale * inv_std * (dy - dBias / M - xhat * dScale / M), M = N * H * W. dX in x's type,
// dOut in the output's (each float32, or bfloat16 as uint16_t).
template <typename In, typename Grad>
std::vector<paddle::Tensor> Backward(const paddle::Tensor& x, const paddle::Tensor& scale, const paddle::Tensor& bias,
                                     const paddle::Tensor* alpha, const paddle::Tensor& saved_mean,
                                     const paddle::Tensor& saved_inv_std, const paddle::Tensor& grad_out) {
  std::vector<const paddle::Tensor*> per_channel{&scale, &bias, &saved_mean, &saved_inv_std};
  if (alpha != nullptr) per_channel.push_back(alpha);
  const Layout l = CheckInputs(x, per_channel);
  PD_CHECK(grad_out.shape() == x.shape(), "pfc_batch_norm_grad: grad_out must be shaped like x");
  auto grad_x = paddle::empty(x.shape(), x.dtype(), paddle::CPUPlace());
  auto grad_scale = paddle::empty({l.channels}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto grad_bias = paddle::empty({l.channels}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto grad_alpha = paddle::empty({l.channels}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  const In* in = Data<In>(x);
  const Grad* dout = Data<Grad>(grad_out);
  const float* gamma = scale.data<float>();
  const float* beta = bias.data<float>();
  const float* means = saved_mean.data<float>();
  const float* inv_stds = saved_inv_std.data<float>();
  const float* slopes = alpha != nullptr ? alpha->data<float>() : nullptr;
  In* dx = Data<In>(grad_x);
  const double count = static_cast<double>(l.count());
  const int64_t block = l.block();
  std::vector<double> sum_dy(block), sum_dy_xc(block), sum_dalpha(block);
  std::vector<float> gains(block), shifts(block), a(block), b(block), d(block);
  for (int64_t c0 = 0; c0 < l.channels; c0 += block) {
    const int64_t k = std::min(block, l.channels - c0);
    for (int64_t j = 0; j < k; ++j) {
      const int64_t c = c0 + j;
      GainShift(gamma[c], beta[c], means[c], inv_stds[c], &gains[j], &shifts[j]);
      sum_dy[j] = sum_dy_xc[j] = sum_dalpha[j] = 0.0;
    }
    for (int64_t n = 0; n < l.batch; ++n) {
      for (int64_t j = 0; j < k; ++j) {
        const In* p = in + l.offset(n, c0 + j);
        const Grad* g = dout + l.offset(n, c0 + j);
        const float mean = means[c0 + j];
        float s_dy = 0.0f, s_dy_xc = 0.0f, s_da = 0.0f;
        if (slopes == nullptr) {
#pragma omp simd reduction(+ : s_dy, s_dy_xc)
          for (int64_t i = 0; i < l.inner; ++i) {
            const float dy = Load(g[i]);
            s_dy += dy;
            s_dy_xc += dy * (Load(p[i]) - mean);
          }
        } else {
          const float gain = gains[j], shift = shifts[j], slope = slopes[c0 + j];
#pragma omp simd reduction(+ : s_dy, s_dy_xc, s_da)
          for (int64_t i = 0; i < l.inner; ++i) {
            const float xv = Load(p[i]), v = Affine(xv, gain, shift);
            const bool positive = v > 0.0f;
            const float dz = Load(g[i]), dy = positive ? dz : slope * dz;
            s_dy += dy;
            s_dy_xc += dy * (xv - mean);
            s_da += positive ? 0.0f : dz * v;
          }
        }
        sum_dy[j] += s_dy;
        sum_dy_xc[j] += s_dy_xc;
        sum_dalpha[j] += s_da;
      }
    }
    for (int64_t j = 0; j < k; ++j) {
      const int64_t c = c0 + j;
      const double inv_std = inv_stds[c], d_scale = sum_dy_xc[j] * inv_std;
      grad_bias.data<float>()[c] = static_cast<float>(sum_dy[j]);
      grad_scale.data<float>()[c] = static_cast<float>(d_scale);
      grad_alpha.data<float>()[c] = static_cast<float>(sum_dalpha[j]);
      // dx = a * dy + (b * x + d): a = scale * inv_std, b = -a * inv_std * dScale / M,
      // d = -a * dBias / M - b * mean
      const double gain = static_cast<double>(gamma[c]) * inv_std;
      const double slope_x = -gain * inv_std * d_scale / count;
      a[j] = static_cast<float>(gain);
      b[j] = static_cast<float>(slope_x);
      d[j] = static_cast<float>(-gain * sum_dy[j] / count - slope_x * means[c]);
    }
    for (int64_t n = 0; n < l.batch; ++n) {
      for (int64_t j = 0; j < k; ++j) {
        const In* p = in + l.offset(n, c0 + j);
        const Grad* g = dout + l.offset(n, c0 + j);
        In* q = dx + l.offset(n, c0 + j);
        const float aj = a[j], bj = b[j], dj = d[j];
        if (slopes == nullptr) {
#pragma omp simd
          for (int64_t i = 0; i < l.inner; ++i) Store(q + i, aj * Load(g[i]) + (bj * Load(p[i]) + dj));
        } else {
          const float gain = gains[j], shift = shifts[j], slope = slopes[c0 + j];
#pragma omp simd
          for (int64_t i = 0; i < l.inner; ++i) {
            const float xv = Load(p[i]), v = Affine(xv, gain, shift);
            const float dz = Load(g[i]), dy = v > 0.0f ? dz : slope * dz;
            Store(q + i, aj * dy + (bj * xv + dj));
          }
        }
      }
    }
  }
  if (slopes == nullptr) return {grad_x, grad_scale, grad_bias};
  return {grad_x, grad_scale, grad_bias, grad_alpha};
}

// The kernel for x's dtype and the output's (float32, or bfloat16 with bf16_out).
std::vector<paddle::Tensor> Forward(const paddle::Tensor& x, const paddle::Tensor& scale, const paddle::Tensor& bias,
                                    const paddle::Tensor* alpha, paddle::Tensor& mean, paddle::Tensor& variance,
                                    float momentum, float epsilon, bool bf16_out) {
  const bool bf16_in = x.dtype() == paddle::DataType::BFLOAT16;
  auto kernel = bf16_in ? (bf16_out ? Forward<uint16_t, uint16_t> : Forward<uint16_t, float>)
                        : (bf16_out ? Forward<float, uint16_t> : Forward<float, float>);
  return kernel(x, scale, bias, alpha, mean, variance, momentum, epsilon);
}

std::vector<paddle::Tensor> BatchNormForward(const paddle::Tensor& x, const paddle::Tensor& scale,
                                             const paddle::Tensor& bias, paddle::Tensor& mean, paddle::Tensor& variance,
                                             float momentum, float epsilon, bool bf16_out) {
  return Forward(x, scale, bias, nullptr, mean, variance, momentum, epsilon, bf16_out);
}

std::vector<paddle::Tensor> BatchNormPReluForward(const paddle::Tensor& x, const paddle::Tensor& scale,
                                                  const paddle::Tensor& bias, const paddle::Tensor& alpha,
                                                  paddle::Tensor& mean, paddle::Tensor& variance, float momentum,
                                                  float epsilon, bool bf16_out) {
  return Forward(x, scale, bias, &alpha, mean, variance, momentum, epsilon, bf16_out);
}

// The kernel for x's dtype and d out's (each float32 or bfloat16).
std::vector<paddle::Tensor> Backward(const paddle::Tensor& x, const paddle::Tensor& scale, const paddle::Tensor& bias,
                                     const paddle::Tensor* alpha, const paddle::Tensor& saved_mean,
                                     const paddle::Tensor& saved_inv_std, const paddle::Tensor& grad_out) {
  PD_CHECK(grad_out.dtype() == paddle::DataType::FLOAT32 || grad_out.dtype() == paddle::DataType::BFLOAT16,
           "pfc_batch_norm_grad: grad_out must be float32 or bfloat16");
  const bool bf16_in = x.dtype() == paddle::DataType::BFLOAT16;
  const bool bf16_grad = grad_out.dtype() == paddle::DataType::BFLOAT16;
  auto kernel = bf16_in ? (bf16_grad ? Backward<uint16_t, uint16_t> : Backward<uint16_t, float>)
                        : (bf16_grad ? Backward<float, uint16_t> : Backward<float, float>);
  return kernel(x, scale, bias, alpha, saved_mean, saved_inv_std, grad_out);
}

std::vector<paddle::Tensor> BatchNormBackward(const paddle::Tensor& x, const paddle::Tensor& scale,
                                              const paddle::Tensor& bias, const paddle::Tensor& saved_mean,
                                              const paddle::Tensor& saved_inv_std, const paddle::Tensor& grad_out) {
  return Backward(x, scale, bias, nullptr, saved_mean, saved_inv_std, grad_out);
}

std::vector<paddle::Tensor> BatchNormPReluBackward(const paddle::Tensor& x, const paddle::Tensor& scale,
                                                   const paddle::Tensor& bias, const paddle::Tensor& alpha,
                                                   const paddle::Tensor& saved_mean,
                                                   const paddle::Tensor& saved_inv_std,
                                                   const paddle::Tensor& grad_out) {
  return Backward(x, scale, bias, &alpha, saved_mean, saved_inv_std, grad_out);
}

using Shape = std::vector<int64_t>;
using Shapes = std::vector<Shape>;
using Dtypes = std::vector<paddle::DataType>;
using Dtype = const paddle::DataType&;
const paddle::DataType kF32 = paddle::DataType::FLOAT32;

// Shapes and dtypes: x's shape for Out and dX (Out's dtype from bf16_out, dX's x's), [C] float32
// for the rest (inputs, then attributes, in the ops' order).
Shapes ForwardShape(const Shape& x, const Shape& c, const Shape&, const Shape&, const Shape&, float, float, bool) {
  return {x, c, c, c, c};
}
Shapes ForwardPReluShape(const Shape& x, const Shape& c, const Shape&, const Shape&, const Shape&, const Shape&, float,
                         float, bool) {
  return {x, c, c, c, c};
}
Dtypes ForwardDtypes(bool bf16_out) {
  return {bf16_out ? paddle::DataType::BFLOAT16 : kF32, kF32, kF32, kF32, kF32};
}
Dtypes ForwardDtype(Dtype, Dtype, Dtype, Dtype, Dtype, float, float, bool bf16_out) { return ForwardDtypes(bf16_out); }
Dtypes ForwardPReluDtype(Dtype, Dtype, Dtype, Dtype, Dtype, Dtype, float, float, bool bf16_out) {
  return ForwardDtypes(bf16_out);
}
Shapes BackwardShape(const Shape& x, const Shape& c, const Shape&, const Shape&, const Shape&, const Shape&) {
  return {x, c, c};
}
Shapes BackwardPReluShape(const Shape& x, const Shape& c, const Shape&, const Shape&, const Shape&, const Shape&,
                          const Shape&) {
  return {x, c, c, c};
}
Dtypes BackwardDtype(Dtype x, Dtype, Dtype, Dtype, Dtype, Dtype) { return {x, kF32, kF32}; }
Dtypes BackwardPReluDtype(Dtype x, Dtype, Dtype, Dtype, Dtype, Dtype, Dtype) { return {x, kF32, kF32, kF32}; }

}  // namespace

PD_BUILD_OP(pfc_batch_norm)
    .Inputs({"X", "Scale", "Bias", "Mean", "Variance"})
    .Outputs({"Out", "MeanOut", "VarianceOut", "SavedMean", "SavedInvStd"})
    .Attrs({"momentum: float", "epsilon: float", "bf16_out: bool"})
    .SetInplaceMap({{"Mean", "MeanOut"}, {"Variance", "VarianceOut"}})
    .SetKernelFn(PD_KERNEL(BatchNormForward))
    .SetInferShapeFn(PD_INFER_SHAPE(ForwardShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(ForwardDtype));

PD_BUILD_GRAD_OP(pfc_batch_norm)
    .Inputs({"X", "Scale", "Bias", "SavedMean", "SavedInvStd", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X"), paddle::Grad("Scale"), paddle::Grad("Bias")})
    .SetKernelFn(PD_KERNEL(BatchNormBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(BackwardShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(BackwardDtype));

PD_BUILD_OP(pfc_batch_norm_prelu)
    .Inputs({"X", "Scale", "Bias", "Alpha", "Mean", "Variance"})
    .Outputs({"Out", "MeanOut", "VarianceOut", "SavedMean", "SavedInvStd"})
    .Attrs({"momentum: float", "epsilon: float", "bf16_out: bool"})
    .SetInplaceMap({{"Mean", "MeanOut"}, {"Variance", "VarianceOut"}})
    .SetKernelFn(PD_KERNEL(BatchNormPReluForward))
    .SetInferShapeFn(PD_INFER_SHAPE(ForwardPReluShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(ForwardPReluDtype));

PD_BUILD_GRAD_OP(pfc_batch_norm_prelu)
    .Inputs({"X", "Scale", "Bias", "Alpha", "SavedMean", "SavedInvStd", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X"), paddle::Grad("Scale"), paddle::Grad("Bias"), paddle::Grad("Alpha")})
    .SetKernelFn(PD_KERNEL(BatchNormPReluBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(BackwardPReluShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(BackwardPReluDtype));
