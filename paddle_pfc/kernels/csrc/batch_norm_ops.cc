// Batch normalisation of NCHW tensors (or NHWC ones, channels_last), alone or
// followed by a channel PReLU: in training (batch statistics) input and output each float32, or
// bfloat16 from and to the bfloat16 convolutions around it; in inference (running statistics,
// float32) one affine pass. NHWC: every pass runs along the rows of [N*H*W, C], vectorised across
// channels (statistics, then normalisation: two reads of x forward, three backward).
// NCHW: channels go in blocks whose planes are ~16 KB contiguous per sample (one channel of a 56x56 map,
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

#include "paddle_ext.h"

namespace {

constexpr int64_t kBlockFloats = 4096;  // a block's contiguous run per sample (16 KB), at least one plane

// x as [batch, channels, inner] (NCHW) or [batch, inner, channels] (channels_last).
struct Layout {
  int64_t batch, channels, inner;
  bool channels_last;
  int64_t count() const { return batch * inner; }  // values a channel's statistics average over
  int64_t block() const { return std::clamp<int64_t>(kBlockFloats / inner, 1, channels); }
  int64_t offset(int64_t n, int64_t c) const { return (n * channels + c) * inner; }  // NCHW
};

Layout CheckInputs(const paddle::Tensor& x, const std::vector<const paddle::Tensor*>& per_channel, bool channels_last) {
  PD_CHECK(x.is_cpu() && (x.dtype() == paddle::DataType::FLOAT32 || x.dtype() == paddle::DataType::BFLOAT16),
           "pfc_batch_norm takes float32 or bfloat16 CPU x");
  const auto& shape = x.shape();
  PD_CHECK(shape.size() >= 2, "pfc_batch_norm: x must be [N, C, ...] ([N, ..., C] with channels_last)");
  Layout l{shape[0], channels_last ? shape.back() : shape[1], 1, channels_last};
  for (size_t d = 1; d + 1 < shape.size(); ++d) l.inner *= shape[channels_last ? d : d + 1];
  PD_CHECK(l.channels > 0, "pfc_batch_norm: x has no channels");
  PD_CHECK(l.count() > 0, "pfc_batch_norm: x has no values per channel");
  for (const paddle::Tensor* t : per_channel) {
    PD_CHECK(t->is_cpu() && t->dtype() == paddle::DataType::FLOAT32 && t->numel() == l.channels,
             "pfc_batch_norm: scale, bias, alpha, mean and variance must be float32 [C] on CPU");
  }
  return l;
}

// A channel's mean is kept as its float32 rounding `center` plus the `residual` mean - center (so
// mean = center + residual to float64 precision), and
// y = (x - center) * gain + shift (gain = scale * inv_std, shift = bias - residual * gain), then the
// PReLU when a slope is given. x - center is of the size of the channel's spread, so a mean large
// against the spread costs no precision (x * gain + (bias - mean * gain) would round x * gain at the
// mean's magnitude). The forward and the backward's recomputation use this one expression, so both
// see the same y (and take the same side of the PReLU).
inline float Affine(float x, float center, float gain, float shift) { return (x - center) * gain + shift; }

// A channel's gain and shift from its mean's residual and its inverse std: the forward and the
// backward both take them from here, so the backward's y is the forward's bit for bit.
inline void GainShift(float scale, float bias, float residual, float inv_std, float* gain, float* shift) {
  *gain = static_cast<float>(static_cast<double>(scale) * inv_std);
  *shift = static_cast<float>(bias - static_cast<double>(residual) * scale * inv_std);
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

// The forward's per-channel results from its sums of d = x - origin and d * d over `count`
// values: the saved mean (2C values: the C centers, then the C residuals) and inverse std, the
// running statistics' update and the normalisation's gain and shift.
struct ForwardChannels {
  const float* gamma;
  const float* beta;
  float* saved_mean;
  float* saved_inv_std;
  float* running_mean;
  float* running_var;
  double count;
  int64_t channels;
  float momentum, epsilon;

  void Finish(int64_t c, double sum, double square, float origin, float* center, float* gain, float* shift) const {
    const double shifted_mean = sum / count;
    const double mean = origin + shifted_mean;
    const double variance = std::max(square / count - shifted_mean * shifted_mean, 0.0);
    const double inv_std = 1.0 / std::sqrt(variance + static_cast<double>(epsilon));
    saved_mean[c] = *center = static_cast<float>(mean);
    saved_mean[channels + c] = static_cast<float>(mean - static_cast<double>(*center));
    saved_inv_std[c] = static_cast<float>(inv_std);
    running_mean[c] = static_cast<float>(momentum * running_mean[c] + (1.0 - momentum) * mean);
    running_var[c] = static_cast<float>(momentum * running_var[c] + (1.0 - momentum) * variance);
    GainShift(gamma[c], beta[c], saved_mean[channels + c], saved_inv_std[c], gain, shift);
  }
};

// y = Affine(x) (then the PReLU with `slope` when `prelu`) of `size` values.
template <typename In, typename Out>
inline void NormaliseRun(const In* p, Out* q, int64_t size, float center, float gain, float shift, bool prelu,
                         float slope) {
  if (!prelu) {
#pragma omp simd
    for (int64_t i = 0; i < size; ++i) Store(q + i, Affine(Load(p[i]), center, gain, shift));
  } else {
#pragma omp simd
    for (int64_t i = 0; i < size; ++i) {
      const float v = Affine(Load(p[i]), center, gain, shift);
      Store(q + i, v > 0.0f ? v : slope * v);
    }
  }
}

// NHWC: y = Affine(x) (then the PReLU when `slopes`) along the rows of [N * inner, C].
template <typename In, typename Out>
void NormaliseRows(const Layout& l, const In* in, Out* y, const float* center, const float* gain, const float* shift,
                   const float* slopes) {
  const int64_t channels = l.channels;
  for (int64_t r = 0; r < l.count(); ++r) {
    const In* p = in + r * channels;
    Out* v = y + r * channels;
    if (slopes == nullptr) {
#pragma omp simd
      for (int64_t c = 0; c < channels; ++c) Store(v + c, Affine(Load(p[c]), center[c], gain[c], shift[c]));
    } else {
#pragma omp simd
      for (int64_t c = 0; c < channels; ++c) {
        const float t = Affine(Load(p[c]), center[c], gain[c], shift[c]);
        Store(v + c, t > 0.0f ? t : slopes[c] * t);
      }
    }
  }
}

// NCHW: channel blocks, each summed then normalised while in L2.
template <typename In, typename Out>
void ForwardChannelsFirst(const Layout& l, const In* in, Out* y, const float* slopes, const ForwardChannels& out) {
  const int64_t block = l.block();
  std::vector<double> sums(block), squares(block);
  std::vector<float> origin(block), centers(block), gains(block), shifts(block);
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
      out.Finish(c0 + j, sums[j], squares[j], origin[j], &centers[j], &gains[j], &shifts[j]);
    }
    for (int64_t n = 0; n < l.batch; ++n) {
      for (int64_t j = 0; j < k; ++j) {
        NormaliseRun(in + l.offset(n, c0 + j), y + l.offset(n, c0 + j), l.inner, centers[j], gains[j], shifts[j],
                     slopes != nullptr, slopes != nullptr ? slopes[c0 + j] : 0.0f);
      }
    }
  }
}

// NHWC: the rows of [N * inner, C], vectorised across channels: sums (float per sample, float64
// across samples, as the planes of NCHW), then the normalisation.
template <typename In, typename Out>
void ForwardChannelsLast(const Layout& l, const In* in, Out* y, const float* slopes, const ForwardChannels& out) {
  const int64_t channels = l.channels;
  std::vector<double> sums(channels, 0.0), squares(channels, 0.0);
  std::vector<float> origin(channels), sample_sums(channels), sample_squares(channels), centers(channels),
      gains(channels), shifts(channels);
  float* o = origin.data();
  float* s = sample_sums.data();
  float* q = sample_squares.data();
  for (int64_t c = 0; c < channels; ++c) o[c] = Load(in[c]);
  for (int64_t n = 0; n < l.batch; ++n) {
    std::fill(sample_sums.begin(), sample_sums.end(), 0.0f);
    std::fill(sample_squares.begin(), sample_squares.end(), 0.0f);
    for (int64_t i = 0; i < l.inner; ++i) {
      const In* p = in + (n * l.inner + i) * channels;
#pragma omp simd
      for (int64_t c = 0; c < channels; ++c) {
        const float d = Load(p[c]) - o[c];
        s[c] += d;
        q[c] += d * d;
      }
    }
    for (int64_t c = 0; c < channels; ++c) {
      sums[c] += s[c];
      squares[c] += q[c];
    }
  }
  for (int64_t c = 0; c < channels; ++c) out.Finish(c, sums[c], squares[c], o[c], &centers[c], &gains[c], &shifts[c]);
  NormaliseRows(l, in, y, centers.data(), gains.data(), shifts.data(), slopes);
}

// x and Out each float32 (float) or bfloat16 (uint16_t). Returns Out, SavedMean ([2C]: the centers,
// then the residuals), SavedInvStd (float32); updates the running statistics in place. The moments come from one pass of sums of
// d = x - x[0, c, 0] and d * d (float per plane, float64 across planes): the shift keeps the
// variance's cancellation at the scale of the data's own spread.
template <typename In, typename Out>
std::vector<paddle::Tensor> Forward(const paddle::Tensor& x, const paddle::Tensor& scale, const paddle::Tensor& bias,
                                    const paddle::Tensor* alpha, paddle::Tensor& running_mean,
                                    paddle::Tensor& running_var, float momentum, float epsilon, bool channels_last) {
  std::vector<const paddle::Tensor*> per_channel{&scale, &bias, &running_mean, &running_var};
  if (alpha != nullptr) per_channel.push_back(alpha);
  const Layout l = CheckInputs(x, per_channel, channels_last);
  constexpr bool kBf16 = std::is_same_v<Out, uint16_t>;
  auto out = paddle::empty(x.shape(), kBf16 ? paddle::DataType::BFLOAT16 : paddle::DataType::FLOAT32,
                           paddle::CPUPlace());
  auto saved_mean = paddle::empty({2 * l.channels}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto saved_inv_std = paddle::empty({l.channels}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  const ForwardChannels channels{scale.data<float>(), bias.data<float>(), saved_mean.data<float>(),
                                 saved_inv_std.data<float>(), running_mean.data<float>(), running_var.data<float>(),
                                 static_cast<double>(l.count()), l.channels, momentum, epsilon};
  const float* slopes = alpha != nullptr ? alpha->data<float>() : nullptr;
  if (channels_last) {
    ForwardChannelsLast(l, Data<In>(x), Data<Out>(out), slopes, channels);
  } else {
    ForwardChannelsFirst(l, Data<In>(x), Data<Out>(out), slopes, channels);
  }
  return {out, saved_mean, saved_inv_std};
}

// The backward's per-channel sums and their results. With xhat = (x - mean) * inv_std,
// y = scale * xhat + bias and dy = dOut (times alpha where y <= 0): dBias = sum dy,
// dScale = sum dy * xhat, dAlpha = sum dOut * y where y <= 0,
// dX = scale * inv_std * (dy - dBias / M - xhat * dScale / M), M = N * H * W, written as
// dX = a * dy + (b * (x - center) + d) with the forward's center and residual (Affine).
struct BackwardChannels {
  const float* gamma;
  const float* means;  // the forward's saved mean: C centers, then C residuals
  const float* inv_stds;
  float* grad_scale;
  float* grad_bias;
  float* grad_alpha;
  double count;
  int64_t channels;

  float center(int64_t c) const { return means[c]; }
  float residual(int64_t c) const { return means[channels + c]; }

  // a, b, d of channel c from its sums of dy, dy * (x - center) and the PReLU's dAlpha terms.
  void Finish(int64_t c, double sum_dy, double sum_dy_xcenter, double sum_dalpha, float* a, float* b, float* d) const {
    const double sum_dy_xc = sum_dy_xcenter - residual(c) * sum_dy;  // sum dy * (x - mean)
    const double inv_std = inv_stds[c], d_scale = sum_dy_xc * inv_std;
    grad_bias[c] = static_cast<float>(sum_dy);
    grad_scale[c] = static_cast<float>(d_scale);
    grad_alpha[c] = static_cast<float>(sum_dalpha);
    const double gain = static_cast<double>(gamma[c]) * inv_std;
    const double slope_x = -gain * inv_std * d_scale / count;
    *a = static_cast<float>(gain);
    *b = static_cast<float>(slope_x);
    *d = static_cast<float>(-gain * sum_dy / count - slope_x * residual(c));
  }
};

// Sums over `size` values of x (p) and dOut (g) into s_dy, s_dy_xc (dy * (x - center); and s_da with the PReLU).
template <typename In, typename Grad>
inline void GradSums(const In* p, const Grad* g, int64_t size, float center, float gain, float shift, bool prelu,
                     float slope, float* s_dy, float* s_dy_xc, float* s_da) {
  float sum_dy = 0.0f, sum_dy_xc = 0.0f, sum_da = 0.0f;
  if (!prelu) {
#pragma omp simd reduction(+ : sum_dy, sum_dy_xc)
    for (int64_t i = 0; i < size; ++i) {
      const float dy = Load(g[i]);
      sum_dy += dy;
      sum_dy_xc += dy * (Load(p[i]) - center);
    }
  } else {
#pragma omp simd reduction(+ : sum_dy, sum_dy_xc, sum_da)
    for (int64_t i = 0; i < size; ++i) {
      const float xv = Load(p[i]), v = Affine(xv, center, gain, shift);
      const bool positive = v > 0.0f;
      const float dz = Load(g[i]), dy = positive ? dz : slope * dz;
      sum_dy += dy;
      sum_dy_xc += dy * (xv - center);
      sum_da += positive ? 0.0f : dz * v;
    }
  }
  *s_dy = sum_dy;
  *s_dy_xc = sum_dy_xc;
  *s_da = sum_da;
}

// dX = a * dy + (b * (x - center) + d) over `size` values.
template <typename In, typename Grad>
inline void GradRun(const In* p, const Grad* g, In* q, int64_t size, float a, float b, float d, float center, float gain,
                    float shift, bool prelu, float slope) {
  if (!prelu) {
#pragma omp simd
    for (int64_t i = 0; i < size; ++i) Store(q + i, a * Load(g[i]) + (b * (Load(p[i]) - center) + d));
  } else {
#pragma omp simd
    for (int64_t i = 0; i < size; ++i) {
      const float xv = Load(p[i]), v = Affine(xv, center, gain, shift);
      const float dz = Load(g[i]), dy = v > 0.0f ? dz : slope * dz;
      Store(q + i, a * dy + (b * (xv - center) + d));
    }
  }
}

template <typename In, typename Grad>
void BackwardChannelsFirst(const Layout& l, const In* in, const Grad* dout, In* dx, const float* slopes,
                           const float* beta, const BackwardChannels& out) {
  const int64_t block = l.block();
  const bool prelu = slopes != nullptr;
  std::vector<double> sum_dy(block), sum_dy_xc(block), sum_dalpha(block);
  std::vector<float> gains(block), shifts(block), a(block), b(block), d(block);
  for (int64_t c0 = 0; c0 < l.channels; c0 += block) {
    const int64_t k = std::min(block, l.channels - c0);
    for (int64_t j = 0; j < k; ++j) {
      const int64_t c = c0 + j;
      GainShift(out.gamma[c], beta[c], out.residual(c), out.inv_stds[c], &gains[j], &shifts[j]);
      sum_dy[j] = sum_dy_xc[j] = sum_dalpha[j] = 0.0;
    }
    for (int64_t n = 0; n < l.batch; ++n) {
      for (int64_t j = 0; j < k; ++j) {
        float s_dy, s_dy_xc, s_da;
        GradSums(in + l.offset(n, c0 + j), dout + l.offset(n, c0 + j), l.inner, out.center(c0 + j), gains[j],
                 shifts[j], prelu, prelu ? slopes[c0 + j] : 0.0f, &s_dy, &s_dy_xc, &s_da);
        sum_dy[j] += s_dy;
        sum_dy_xc[j] += s_dy_xc;
        sum_dalpha[j] += s_da;
      }
    }
    for (int64_t j = 0; j < k; ++j) out.Finish(c0 + j, sum_dy[j], sum_dy_xc[j], sum_dalpha[j], &a[j], &b[j], &d[j]);
    for (int64_t n = 0; n < l.batch; ++n) {
      for (int64_t j = 0; j < k; ++j) {
        GradRun(in + l.offset(n, c0 + j), dout + l.offset(n, c0 + j), dx + l.offset(n, c0 + j), l.inner, a[j], b[j], d[j],
                out.center(c0 + j), gains[j], shifts[j], prelu, prelu ? slopes[c0 + j] : 0.0f);
      }
    }
  }
}

template <typename In, typename Grad>
void BackwardChannelsLast(const Layout& l, const In* in, const Grad* dout, In* dx, const float* slopes,
                          const float* beta, const BackwardChannels& out) {
  const int64_t channels = l.channels;
  std::vector<double> sum_dy(channels, 0.0), sum_dy_xc(channels, 0.0), sum_dalpha(channels, 0.0);
  std::vector<float> gains(channels), shifts(channels), a(channels), b(channels), d(channels);
  std::vector<float> sample_dy(channels), sample_dy_xc(channels), sample_da(channels);
  for (int64_t c = 0; c < channels; ++c) {
    GainShift(out.gamma[c], beta[c], out.residual(c), out.inv_stds[c], &gains[c], &shifts[c]);
  }
  const float* gain = gains.data();
  const float* shift = shifts.data();
  const float* center = out.means;  // the centers (the residuals follow them)
  float* s1 = sample_dy.data();
  float* s2 = sample_dy_xc.data();
  float* s3 = sample_da.data();
  for (int64_t n = 0; n < l.batch; ++n) {
    std::fill(sample_dy.begin(), sample_dy.end(), 0.0f);
    std::fill(sample_dy_xc.begin(), sample_dy_xc.end(), 0.0f);
    std::fill(sample_da.begin(), sample_da.end(), 0.0f);
    for (int64_t i = 0; i < l.inner; ++i) {
      const In* p = in + (n * l.inner + i) * channels;
      const Grad* g = dout + (n * l.inner + i) * channels;
      if (slopes == nullptr) {
#pragma omp simd
        for (int64_t c = 0; c < channels; ++c) {
          const float dy = Load(g[c]);
          s1[c] += dy;
          s2[c] += dy * (Load(p[c]) - center[c]);
        }
      } else {
#pragma omp simd
        for (int64_t c = 0; c < channels; ++c) {
          const float xv = Load(p[c]), v = Affine(xv, center[c], gain[c], shift[c]);
          const bool positive = v > 0.0f;
          const float dz = Load(g[c]), dy = positive ? dz : slopes[c] * dz;
          s1[c] += dy;
          s2[c] += dy * (xv - center[c]);
          s3[c] += positive ? 0.0f : dz * v;
        }
      }
    }
    for (int64_t c = 0; c < channels; ++c) {
      sum_dy[c] += s1[c];
      sum_dy_xc[c] += s2[c];
      sum_dalpha[c] += s3[c];
    }
  }
  for (int64_t c = 0; c < channels; ++c) out.Finish(c, sum_dy[c], sum_dy_xc[c], sum_dalpha[c], &a[c], &b[c], &d[c]);
  const float* pa = a.data();
  const float* pb = b.data();
  const float* pd = d.data();
  for (int64_t r = 0; r < l.count(); ++r) {
    const In* p = in + r * channels;
    const Grad* g = dout + r * channels;
    In* q = dx + r * channels;
    if (slopes == nullptr) {
#pragma omp simd
      for (int64_t c = 0; c < channels; ++c) {
        Store(q + c, pa[c] * Load(g[c]) + (pb[c] * (Load(p[c]) - center[c]) + pd[c]));
      }
    } else {
#pragma omp simd
      for (int64_t c = 0; c < channels; ++c) {
        const float xv = Load(p[c]), v = Affine(xv, center[c], gain[c], shift[c]);
        const float dz = Load(g[c]), dy = v > 0.0f ? dz : slopes[c] * dz;
        Store(q + c, pa[c] * dy + (pb[c] * (xv - center[c]) + pd[c]));
      }
    }
  }
}

// Returns dX, dScale, dBias (and dAlpha when `alpha` is given; BackwardChannels states the math).
// dX in x's type, dOut in the output's (each float32, or bfloat16 as uint16_t).
template <typename In, typename Grad>
std::vector<paddle::Tensor> Backward(const paddle::Tensor& x, const paddle::Tensor& scale, const paddle::Tensor& bias,
                                     const paddle::Tensor* alpha, const paddle::Tensor& saved_mean,
                                     const paddle::Tensor& saved_inv_std, const paddle::Tensor& grad_out,
                                     bool channels_last) {
  std::vector<const paddle::Tensor*> per_channel{&scale, &bias, &saved_inv_std};
  if (alpha != nullptr) per_channel.push_back(alpha);
  const Layout l = CheckInputs(x, per_channel, channels_last);
  PD_CHECK(saved_mean.is_cpu() && saved_mean.dtype() == paddle::DataType::FLOAT32 && saved_mean.numel() == 2 * l.channels,
           "pfc_batch_norm_grad: the saved mean must be the forward's float32 [2C]");
  PD_CHECK(grad_out.shape() == x.shape(), "pfc_batch_norm_grad: grad_out must be shaped like x");
  auto grad_x = paddle::empty(x.shape(), x.dtype(), paddle::CPUPlace());
  auto grad_scale = paddle::empty({l.channels}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto grad_bias = paddle::empty({l.channels}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto grad_alpha = paddle::empty({l.channels}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  const BackwardChannels channels{scale.data<float>(), saved_mean.data<float>(), saved_inv_std.data<float>(),
                                  grad_scale.data<float>(), grad_bias.data<float>(), grad_alpha.data<float>(),
                                  static_cast<double>(l.count()), l.channels};
  const float* slopes = alpha != nullptr ? alpha->data<float>() : nullptr;
  if (channels_last) {
    BackwardChannelsLast(l, Data<In>(x), Data<Grad>(grad_out), Data<In>(grad_x), slopes, bias.data<float>(), channels);
  } else {
    BackwardChannelsFirst(l, Data<In>(x), Data<Grad>(grad_out), Data<In>(grad_x), slopes, bias.data<float>(), channels);
  }
  if (slopes == nullptr) return {grad_x, grad_scale, grad_bias};
  return {grad_x, grad_scale, grad_bias, grad_alpha};
}

// The kernel for x's dtype and the output's (float32, or bfloat16 with bf16_out).
std::vector<paddle::Tensor> Forward(const paddle::Tensor& x, const paddle::Tensor& scale, const paddle::Tensor& bias,
                                    const paddle::Tensor* alpha, paddle::Tensor& mean, paddle::Tensor& variance,
                                    float momentum, float epsilon, bool bf16_out, bool channels_last) {
  const bool bf16_in = x.dtype() == paddle::DataType::BFLOAT16;
  auto kernel = bf16_in ? (bf16_out ? Forward<uint16_t, uint16_t> : Forward<uint16_t, float>)
                        : (bf16_out ? Forward<float, uint16_t> : Forward<float, float>);
  return kernel(x, scale, bias, alpha, mean, variance, momentum, epsilon, channels_last);
}

std::vector<paddle::Tensor> BatchNormForward(const paddle::Tensor& x, const paddle::Tensor& scale,
                                             const paddle::Tensor& bias, paddle::Tensor& mean, paddle::Tensor& variance,
                                             float momentum, float epsilon, bool bf16_out, bool channels_last) {
  return Forward(x, scale, bias, nullptr, mean, variance, momentum, epsilon, bf16_out, channels_last);
}

std::vector<paddle::Tensor> BatchNormPReluForward(const paddle::Tensor& x, const paddle::Tensor& scale,
                                                  const paddle::Tensor& bias, const paddle::Tensor& alpha,
                                                  paddle::Tensor& mean, paddle::Tensor& variance, float momentum,
                                                  float epsilon, bool bf16_out, bool channels_last) {
  return Forward(x, scale, bias, &alpha, mean, variance, momentum, epsilon, bf16_out, channels_last);
}

// The kernel for x's dtype and d out's (each float32 or bfloat16).
std::vector<paddle::Tensor> Backward(const paddle::Tensor& x, const paddle::Tensor& scale, const paddle::Tensor& bias,
                                     const paddle::Tensor* alpha, const paddle::Tensor& saved_mean,
                                     const paddle::Tensor& saved_inv_std, const paddle::Tensor& grad_out,
                                     bool channels_last) {
  PD_CHECK(grad_out.dtype() == paddle::DataType::FLOAT32 || grad_out.dtype() == paddle::DataType::BFLOAT16,
           "pfc_batch_norm_grad: grad_out must be float32 or bfloat16");
  const bool bf16_in = x.dtype() == paddle::DataType::BFLOAT16;
  const bool bf16_grad = grad_out.dtype() == paddle::DataType::BFLOAT16;
  auto kernel = bf16_in ? (bf16_grad ? Backward<uint16_t, uint16_t> : Backward<uint16_t, float>)
                        : (bf16_grad ? Backward<float, uint16_t> : Backward<float, float>);
  return kernel(x, scale, bias, alpha, saved_mean, saved_inv_std, grad_out, channels_last);
}

std::vector<paddle::Tensor> BatchNormBackward(const paddle::Tensor& x, const paddle::Tensor& scale,
                                              const paddle::Tensor& bias, const paddle::Tensor& saved_mean,
                                              const paddle::Tensor& saved_inv_std, const paddle::Tensor& grad_out,
                                              float, float, bool, bool channels_last) {
  return Backward(x, scale, bias, nullptr, saved_mean, saved_inv_std, grad_out, channels_last);
}

std::vector<paddle::Tensor> BatchNormPReluBackward(const paddle::Tensor& x, const paddle::Tensor& scale,
                                                   const paddle::Tensor& bias, const paddle::Tensor& alpha,
                                                   const paddle::Tensor& saved_mean,
                                                   const paddle::Tensor& saved_inv_std,
                                                   const paddle::Tensor& grad_out, float, float, bool,
                                                   bool channels_last) {
  return Backward(x, scale, bias, &alpha, saved_mean, saved_inv_std, grad_out, channels_last);
}

// Inference (eval mode): y = Affine(x) about the running mean (residual 0), with each channel's gain
// and shift from the running statistics (GainShift of 1 / sqrt(variance + epsilon), float64), then the PReLU when
// `alpha` is given; float32 in and out, one read of x and one write of y. No gradient.
std::vector<paddle::Tensor> Inference(const paddle::Tensor& x, const paddle::Tensor& scale, const paddle::Tensor& bias,
                                      const paddle::Tensor& mean, const paddle::Tensor& variance,
                                      const paddle::Tensor* alpha, float epsilon, bool channels_last) {
  std::vector<const paddle::Tensor*> per_channel{&scale, &bias, &mean, &variance};
  if (alpha != nullptr) per_channel.push_back(alpha);
  PD_CHECK(x.dtype() == paddle::DataType::FLOAT32, "pfc_batch_norm_inference takes float32 x");
  const Layout l = CheckInputs(x, per_channel, channels_last);
  auto out = paddle::empty(x.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  std::vector<float> gains(l.channels), shifts(l.channels);
  for (int64_t c = 0; c < l.channels; ++c) {
    const double inv_std = 1.0 / std::sqrt(static_cast<double>(variance.data<float>()[c]) + epsilon);
    GainShift(scale.data<float>()[c], bias.data<float>()[c], 0.0f, static_cast<float>(inv_std), &gains[c], &shifts[c]);
  }
  const float* slopes = alpha != nullptr ? alpha->data<float>() : nullptr;
  const float* in = x.data<float>();
  const float* centers = mean.data<float>();
  float* y = out.data<float>();
  if (!channels_last) {
    for (int64_t n = 0; n < l.batch; ++n) {
      for (int64_t c = 0; c < l.channels; ++c) {
        NormaliseRun(in + l.offset(n, c), y + l.offset(n, c), l.inner, centers[c], gains[c], shifts[c],
                     slopes != nullptr, slopes != nullptr ? slopes[c] : 0.0f);
      }
    }
  } else {
    NormaliseRows(l, in, y, centers, gains.data(), shifts.data(), slopes);
  }
  return {out};
}

std::vector<paddle::Tensor> BatchNormInference(const paddle::Tensor& x, const paddle::Tensor& scale,
                                               const paddle::Tensor& bias, const paddle::Tensor& mean,
                                               const paddle::Tensor& variance, float epsilon, bool channels_last) {
  return Inference(x, scale, bias, mean, variance, nullptr, epsilon, channels_last);
}

std::vector<paddle::Tensor> BatchNormPReluInference(const paddle::Tensor& x, const paddle::Tensor& scale,
                                                    const paddle::Tensor& bias, const paddle::Tensor& alpha,
                                                    const paddle::Tensor& mean, const paddle::Tensor& variance,
                                                    float epsilon, bool channels_last) {
  return Inference(x, scale, bias, mean, variance, &alpha, epsilon, channels_last);
}

using Shape = std::vector<int64_t>;
using Shapes = std::vector<Shape>;
using Dtypes = std::vector<paddle::DataType>;
using Dtype = const paddle::DataType&;
const paddle::DataType kF32 = paddle::DataType::FLOAT32;

// Shapes and dtypes: x's shape for Out and dX (Out's dtype from bf16_out, dX's x's), [C] float32
// for the rest (inputs, then attributes, in the ops' order).
// SavedMean: [2C], the centers then the residuals (ForwardChannels).
Shapes ForwardShape(const Shape& x, const Shape& c, const Shape&, const Shape&, const Shape&, float, float, bool, bool) {
  return {x, c, c, {2 * c[0]}, c};
}
Shapes ForwardPReluShape(const Shape& x, const Shape& c, const Shape&, const Shape&, const Shape&, const Shape&, float,
                         float, bool, bool) {
  return {x, c, c, {2 * c[0]}, c};
}
Dtypes ForwardDtypes(bool bf16_out) {
  return {bf16_out ? paddle::DataType::BFLOAT16 : kF32, kF32, kF32, kF32, kF32};
}
Dtypes ForwardDtype(Dtype, Dtype, Dtype, Dtype, Dtype, float, float, bool bf16_out, bool) { return ForwardDtypes(bf16_out); }
Dtypes ForwardPReluDtype(Dtype, Dtype, Dtype, Dtype, Dtype, Dtype, float, float, bool bf16_out, bool) {
  return ForwardDtypes(bf16_out);
}
Shapes BackwardShape(const Shape& x, const Shape& c, const Shape&, const Shape&, const Shape&, const Shape&, float, float,
                     bool, bool) {
  return {x, c, c};
}
Shapes BackwardPReluShape(const Shape& x, const Shape& c, const Shape&, const Shape&, const Shape&, const Shape&,
                          const Shape&, float, float, bool, bool) {
  return {x, c, c, c};
}
Dtypes BackwardDtype(Dtype x, Dtype, Dtype, Dtype, Dtype, Dtype) { return {x, kF32, kF32}; }
Dtypes BackwardPReluDtype(Dtype x, Dtype, Dtype, Dtype, Dtype, Dtype, Dtype) { return {x, kF32, kF32, kF32}; }
Shapes InferenceShape(const Shape& x, const Shape&, const Shape&, const Shape&, const Shape&, float, bool) { return {x}; }
Shapes InferencePReluShape(const Shape& x, const Shape&, const Shape&, const Shape&, const Shape&, const Shape&, float,
                           bool) {
  return {x};
}
Dtypes InferenceDtype(Dtype, Dtype, Dtype, Dtype, Dtype, float, bool) { return {kF32}; }
Dtypes InferencePReluDtype(Dtype, Dtype, Dtype, Dtype, Dtype, Dtype, float, bool) { return {kF32}; }

}  // namespace

PD_BUILD_OP(pfc_batch_norm)
    .Inputs({"X", "Scale", "Bias", "Mean", "Variance"})
    .Outputs({"Out", "MeanOut", "VarianceOut", "SavedMean", "SavedInvStd"})
    .Attrs({"momentum: float", "epsilon: float", "bf16_out: bool", "channels_last: bool"})
    .SetInplaceMap({{"Mean", "MeanOut"}, {"Variance", "VarianceOut"}})
    .SetKernelFn(PD_KERNEL(BatchNormForward))
    .SetInferShapeFn(PD_INFER_SHAPE(ForwardShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(ForwardDtype));

PD_BUILD_GRAD_OP(pfc_batch_norm)
    .Inputs({"X", "Scale", "Bias", "SavedMean", "SavedInvStd", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X"), paddle::Grad("Scale"), paddle::Grad("Bias")})
    .Attrs({"momentum: float", "epsilon: float", "bf16_out: bool", "channels_last: bool"})
    .SetKernelFn(PD_KERNEL(BatchNormBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(BackwardShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(BackwardDtype));

PD_BUILD_OP(pfc_batch_norm_prelu)
    .Inputs({"X", "Scale", "Bias", "Alpha", "Mean", "Variance"})
    .Outputs({"Out", "MeanOut", "VarianceOut", "SavedMean", "SavedInvStd"})
    .Attrs({"momentum: float", "epsilon: float", "bf16_out: bool", "channels_last: bool"})
    .SetInplaceMap({{"Mean", "MeanOut"}, {"Variance", "VarianceOut"}})
    .SetKernelFn(PD_KERNEL(BatchNormPReluForward))
    .SetInferShapeFn(PD_INFER_SHAPE(ForwardPReluShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(ForwardPReluDtype));

PD_BUILD_GRAD_OP(pfc_batch_norm_prelu)
    .Inputs({"X", "Scale", "Bias", "Alpha", "SavedMean", "SavedInvStd", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X"), paddle::Grad("Scale"), paddle::Grad("Bias"), paddle::Grad("Alpha")})
    .Attrs({"momentum: float", "epsilon: float", "bf16_out: bool", "channels_last: bool"})
    .SetKernelFn(PD_KERNEL(BatchNormPReluBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(BackwardPReluShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(BackwardPReluDtype));

PD_BUILD_OP(pfc_batch_norm_inference)
    .Inputs({"X", "Scale", "Bias", "Mean", "Variance"})
    .Outputs({"Out"})
    .Attrs({"epsilon: float", "channels_last: bool"})
    .SetKernelFn(PD_KERNEL(BatchNormInference))
    .SetInferShapeFn(PD_INFER_SHAPE(InferenceShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(InferenceDtype));

PD_BUILD_OP(pfc_batch_norm_prelu_inference)
    .Inputs({"X", "Scale", "Bias", "Alpha", "Mean", "Variance"})
    .Outputs({"Out"})
    .Attrs({"epsilon: float", "channels_last: bool"})
    .SetKernelFn(PD_KERNEL(BatchNormPReluInference))
    .SetInferShapeFn(PD_INFER_SHAPE(InferencePReluShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(InferencePReluDtype));
