// CPU kernels for backbone ops whose Paddle 3.3 CPU kernels are far below memory speed. Profiled on
// mobilefacenet at 112x112 (2026-11-23, AMD EPYC Zen 4): Paddle's prelu forward and backward took
// 33 % of a training step's CPU time, more than all its convolutions' forward; its depthwise
// convolutions another 17 %, and its grouped 3x3 convolution (64 groups of 2 channels, im2col +
// GEMM in Paddle and in oneDNN alike) ~13 %. Built on first use by paddle_pfc/kernels/native_ops.py; the Python module
// states the contracts.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "paddle_ext.h"

namespace {

// (outer, channels, inner) of a [N, C, ...] tensor: channel c of sample n is the contiguous run
// [(n * C + c) * inner, (n * C + c + 1) * inner).
void ChannelLayout(const paddle::Tensor& x, const paddle::Tensor& alpha, int64_t* outer, int64_t* channels,
                   int64_t* inner) {
  PD_CHECK(x.is_cpu() && alpha.is_cpu(), "pfc_prelu runs on CPU tensors");
  PD_CHECK(x.dtype() == paddle::DataType::FLOAT32 && alpha.dtype() == paddle::DataType::FLOAT32,
           "pfc_prelu takes float32 x and alpha");
  const auto& shape = x.shape();
  PD_CHECK(shape.size() >= 2, "pfc_prelu: x must be [N, C, ...]");
  *outer = shape[0];
  *channels = shape[1];
  PD_CHECK(alpha.numel() == *channels, "pfc_prelu: alpha must hold one value per channel");
  *inner = 1;
  for (size_t d = 2; d < shape.size(); ++d) *inner *= shape[d];
}

}  // namespace

// out = x where x > 0, alpha[c] * x elsewhere (Paddle's prelu, mode "channel", NCHW).
std::vector<paddle::Tensor> PReluForward(const paddle::Tensor& x, const paddle::Tensor& alpha) {
  int64_t outer, channels, inner;
  ChannelLayout(x, alpha, &outer, &channels, &inner);
  auto out = paddle::empty(x.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  const float* in = x.data<float>();
  const float* a = alpha.data<float>();
  float* y = out.data<float>();
  for (int64_t plane = 0; plane < outer * channels; ++plane) {
    const float slope = a[plane % channels];
    const float* xp = in + plane * inner;
    float* yp = y + plane * inner;
#pragma omp simd
    for (int64_t i = 0; i < inner; ++i) yp[i] = xp[i] > 0.0f ? xp[i] : slope * xp[i];
  }
  return {out};
}

// dx = dy where x > 0, alpha[c] * dy elsewhere; dalpha[c] = sum over n and positions of x * dy
// where x <= 0 (per-plane float sums added in double, rounded once).
std::vector<paddle::Tensor> PReluBackward(const paddle::Tensor& x, const paddle::Tensor& alpha,
                                          const paddle::Tensor& grad_out) {
  int64_t outer, channels, inner;
  ChannelLayout(x, alpha, &outer, &channels, &inner);
  PD_CHECK(grad_out.shape() == x.shape() && grad_out.dtype() == paddle::DataType::FLOAT32,
           "pfc_prelu_grad: grad_out must be float32 shaped like x");
  auto grad_x = paddle::empty(x.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto grad_alpha = paddle::empty(alpha.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  const float* in = x.data<float>();
  const float* a = alpha.data<float>();
  const float* dy = grad_out.data<float>();
  float* dx = grad_x.data<float>();
  std::vector<double> sums(channels, 0.0);
  for (int64_t plane = 0; plane < outer * channels; ++plane) {
    const int64_t c = plane % channels;
    const float slope = a[c];
    const float* xp = in + plane * inner;
    const float* dyp = dy + plane * inner;
    float* dxp = dx + plane * inner;
    float partial = 0.0f;
#pragma omp simd reduction(+ : partial)
    for (int64_t i = 0; i < inner; ++i) {
      const bool positive = xp[i] > 0.0f;
      dxp[i] = positive ? dyp[i] : slope * dyp[i];
      partial += positive ? 0.0f : xp[i] * dyp[i];
    }
    sums[c] += partial;
  }
  float* da = grad_alpha.data<float>();
  for (int64_t c = 0; c < channels; ++c) da[c] = static_cast<float>(sums[c]);
  return {grad_x, grad_alpha};
}

std::vector<std::vector<int64_t>> PReluShape(const std::vector<int64_t>& x, const std::vector<int64_t>&) {
  return {x};
}

std::vector<paddle::DataType> PReluDtype(const paddle::DataType& x, const paddle::DataType&) { return {x}; }

std::vector<std::vector<int64_t>> PReluGradShape(const std::vector<int64_t>& x, const std::vector<int64_t>& alpha,
                                                 const std::vector<int64_t>&) {
  return {x, alpha};
}

std::vector<paddle::DataType> PReluGradDtype(const paddle::DataType& x, const paddle::DataType& alpha,
                                             const paddle::DataType&) {
  return {x, alpha};
}

PD_BUILD_OP(pfc_prelu)
    .Inputs({"X", "Alpha"})
    .Outputs({"Out"})
    .SetKernelFn(PD_KERNEL(PReluForward))
    .SetInferShapeFn(PD_INFER_SHAPE(PReluShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(PReluDtype));

PD_BUILD_GRAD_OP(pfc_prelu)
    .Inputs({"X", "Alpha", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X"), paddle::Grad("Alpha")})
    .SetKernelFn(PD_KERNEL(PReluBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(PReluGradShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(PReluGradDtype));

// ---------------------------------------------------------------------------------------------
// Grouped 2-D convolution with few channels a group (depthwise: one filter per channel;
// mobilefacenet's 64 groups of 2), NCHW, no dilation, no bias; output channel o of group
// q = o / (O / groups) reads input channels q * Cg + b, b < Cg = C / groups:
// out[n, o, oh, ow] = sum_{b, i, j} w[o, b, i, j] * x[n, q * Cg + b, oh * sh - ph + i, ow * sw - pw + j]
// (positions outside x count as 0). Stride 1 (mobilefacenet's grouped layer) runs on padded
// copies with register-held chunks; other strides on passes over whole rows per kernel tap.
namespace {

struct GroupedGeometry {
  int64_t batch, channels, out_channels, group_in, group_out, in_h, in_w, out_h, out_w, k_h, k_w;
  int stride_h, stride_w, pad_h, pad_w;

  // The output columns [lo, hi) whose input column ow * sw - pw + j lies inside [0, in_w).
  void Columns(int64_t j, int64_t* lo, int64_t* hi) const {
    *lo = 0;
    while (*lo < out_w && *lo * stride_w - pad_w + j < 0) ++*lo;
    *hi = out_w;
    while (*hi > *lo && (*hi - 1) * stride_w - pad_w + j >= in_w) --*hi;
  }
  // The first input channel read by output channel o.
  int64_t FirstInput(int64_t o) const { return o / group_out * group_in; }
};

GroupedGeometry Geometry(const paddle::Tensor& x, const paddle::Tensor& w, int stride_h, int stride_w,
                         int pad_h, int pad_w, int groups) {
  PD_CHECK(x.is_cpu() && w.is_cpu(), "pfc_grouped_conv2d runs on CPU tensors");
  PD_CHECK(x.dtype() == paddle::DataType::FLOAT32 && w.dtype() == paddle::DataType::FLOAT32,
           "pfc_grouped_conv2d takes float32 x and weight");
  PD_CHECK(x.shape().size() == 4 && w.shape().size() == 4, "x must be [N, C, H, W], weight [O, C / groups, kh, kw]");
  PD_CHECK(groups >= 1 && x.shape()[1] % groups == 0 && w.shape()[0] % groups == 0 &&
               w.shape()[1] * groups == x.shape()[1],
           "pfc_grouped_conv2d: weight must be [O, C / groups, kh, kw] for x's C, with groups dividing C and O");
  PD_CHECK(stride_h >= 1 && stride_w >= 1 && pad_h >= 0 && pad_w >= 0, "bad stride or padding");
  GroupedGeometry g{};
  g.batch = x.shape()[0];
  g.channels = x.shape()[1];
  g.out_channels = w.shape()[0];
  g.group_in = g.channels / groups;
  g.group_out = g.out_channels / groups;
  g.in_h = x.shape()[2];
  g.in_w = x.shape()[3];
  g.k_h = w.shape()[2];
  g.k_w = w.shape()[3];
  g.stride_h = stride_h;
  g.stride_w = stride_w;
  g.pad_h = pad_h;
  g.pad_w = pad_w;
  g.out_h = (g.in_h + 2 * pad_h - g.k_h) / stride_h + 1;
  g.out_w = (g.in_w + 2 * pad_w - g.k_w) / stride_w + 1;
  PD_CHECK(g.out_h >= 1 && g.out_w >= 1, "pfc_grouped_conv2d: kernel larger than the padded input");
  return g;
}

// Any stride: each kernel tap is a pass over whole output rows (a load and a store per tap).
void StridedForward(const GroupedGeometry& g, const float* in, const float* filters, float* y) {
  const int64_t sw = g.stride_w, taps = g.k_h * g.k_w, in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t o = 0; o < g.out_channels; ++o) {
      float* yp = y + (n * g.out_channels + o) * out_plane;
      for (int64_t k = 0; k < out_plane; ++k) yp[k] = 0.0f;
      for (int64_t b = 0; b < g.group_in; ++b) {
        const float* xp = in + (n * g.channels + g.FirstInput(o) + b) * in_plane;
        const float* f = filters + (o * g.group_in + b) * taps;
        for (int64_t j = 0; j < g.k_w; ++j) {
          int64_t lo, hi;
          g.Columns(j, &lo, &hi);
          for (int64_t oh = 0; oh < g.out_h; ++oh) {
            float* row = yp + oh * g.out_w;
            for (int64_t i = 0; i < g.k_h; ++i) {
              const int64_t ih = oh * g.stride_h - g.pad_h + i;
              if (ih < 0 || ih >= g.in_h) continue;
              const float tap = f[i * g.k_w + j];
              const float* src = xp + ih * g.in_w - g.pad_w + j;
              if (sw == 1) {  // contiguous: vector loads instead of gathers
#pragma omp simd
                for (int64_t ow = lo; ow < hi; ++ow) row[ow] += tap * src[ow];
              } else {
#pragma omp simd
                for (int64_t ow = lo; ow < hi; ++ow) row[ow] += tap * src[ow * sw];
              }
            }
          }
        }
      }
    }
  }
}

// Stride 1: a sample's group is copied once into zero-padded planes, so every output row is
// chunks of kChunk columns, each the sum over taps of tap * (a shifted row of a padded plane),
// held in registers: no bounds tests, one store per chunk instead of a load and a store per tap.
constexpr int64_t kChunk = 16;
typedef float Chunk __attribute__((vector_size(kChunk * sizeof(float))));

inline Chunk LoadChunk(const float* p) {
  Chunk v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

inline void StoreChunk(float* p, Chunk v, int64_t count) {
  if (count >= kChunk) {
    __builtin_memcpy(p, &v, sizeof v);
  } else {
    float lanes[kChunk];
    __builtin_memcpy(lanes, &v, sizeof v);
    std::copy(lanes, lanes + count, p);
  }
}

inline float SumChunk(Chunk v) {
  float lanes[kChunk];
  __builtin_memcpy(lanes, &v, sizeof v);
  float total = 0.0f;
  for (int64_t t = 0; t < kChunk; ++t) total += lanes[t];
  return total;
}

// acc + sum_{i < kh, j < kw} taps[i * kw + j] * at[i * pitch + j + t], t < kChunk.
inline Chunk Correlate(const float* at, int64_t pitch, const float* taps, int64_t kh, int64_t kw, Chunk acc) {
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j) acc += taps[i * kw + j] * LoadChunk(at + i * pitch + j);
  return acc;
}

// Planes of [rows, pitch] floats, zero outside what Put writes (Put always writes the same
// window, so the border zeroed once stays zero), with kChunk spare columns on the right.
struct PaddedPlanes {
  int64_t rows, pitch, top, left;
  std::vector<float> data;
  PaddedPlanes(int64_t count, int64_t h, int64_t w, int64_t pad_top, int64_t pad_left, int64_t pad_bottom,
               int64_t pad_right)
      : rows(h + pad_top + pad_bottom), pitch(w + pad_left + pad_right + kChunk), top(pad_top), left(pad_left),
        data(count * rows * pitch, 0.0f) {}
  float* Plane(int64_t k) { return data.data() + k * rows * pitch; }
  void Put(int64_t k, const float* src, int64_t h, int64_t w) {
    float* dst = Plane(k) + top * pitch + left;
    for (int64_t r = 0; r < h; ++r) std::copy(src + r * w, src + (r + 1) * w, dst + r * pitch);
  }
};

void UnitStrideForward(const GroupedGeometry& g, const float* in, const float* filters, float* y) {
  const int64_t taps = g.k_h * g.k_w, in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  PaddedPlanes xp(g.group_in, g.in_h, g.in_w, g.pad_h, g.pad_w, g.pad_h, g.pad_w);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t q = 0; q < g.channels / g.group_in; ++q) {
      for (int64_t b = 0; b < g.group_in; ++b)
        xp.Put(b, in + (n * g.channels + q * g.group_in + b) * in_plane, g.in_h, g.in_w);
      for (int64_t o = q * g.group_out; o < (q + 1) * g.group_out; ++o) {
        float* yp = y + (n * g.out_channels + o) * out_plane;
        const float* f = filters + o * g.group_in * taps;
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          for (int64_t ow = 0; ow < g.out_w; ow += kChunk) {
            Chunk acc = {};
            for (int64_t b = 0; b < g.group_in; ++b)
              acc = Correlate(xp.Plane(b) + oh * xp.pitch + ow, xp.pitch, f + b * taps, g.k_h, g.k_w, acc);
            StoreChunk(yp + oh * g.out_w + ow, acc, g.out_w - ow);
          }
        }
      }
    }
  }
}

}  // namespace

std::vector<paddle::Tensor> GroupedForward(const paddle::Tensor& x, const paddle::Tensor& w, int stride_h,
                                           int stride_w, int pad_h, int pad_w, int groups) {
  const GroupedGeometry g = Geometry(x, w, stride_h, stride_w, pad_h, pad_w, groups);
  auto out = paddle::empty({g.batch, g.out_channels, g.out_h, g.out_w}, paddle::DataType::FLOAT32,
                           paddle::CPUPlace());
  if (stride_h == 1 && stride_w == 1) {
    UnitStrideForward(g, x.data<float>(), w.data<float>(), out.data<float>());
  } else {
    StridedForward(g, x.data<float>(), w.data<float>(), out.data<float>());
  }
  return {out};
}

namespace {

// Any stride: per tap, one pass over the output rows (d w's partial sum and d x's scatter).
void StridedBackward(const GroupedGeometry& g, const float* in, const float* filters, const float* dy, float* dx,
                     double* sums) {
  const int64_t taps = g.k_h * g.k_w, sw = g.stride_w, in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t o = 0; o < g.out_channels; ++o) {
      const float* dyp = dy + (n * g.out_channels + o) * out_plane;
      for (int64_t b = 0; b < g.group_in; ++b) {
        const int64_t c = g.FirstInput(o) + b;
        const float* xp = in + (n * g.channels + c) * in_plane;
        float* dxp = dx + (n * g.channels + c) * in_plane;
        const int64_t filter = (o * g.group_in + b) * taps;
        for (int64_t j = 0; j < g.k_w; ++j) {
          int64_t lo, hi;
          g.Columns(j, &lo, &hi);
          for (int64_t i = 0; i < g.k_h; ++i) {
            const float tap = filters[filter + i * g.k_w + j];
            float partial = 0.0f;
            for (int64_t oh = 0; oh < g.out_h; ++oh) {
              const int64_t ih = oh * g.stride_h - g.pad_h + i;
              if (ih < 0 || ih >= g.in_h) continue;
              const float* row = dyp + oh * g.out_w;
              const float* src = xp + ih * g.in_w - g.pad_w + j;
              float* dst = dxp + ih * g.in_w - g.pad_w + j;
              // For one tap, distinct outputs read distinct inputs: this row update has no overlap.
              if (sw == 1) {  // contiguous: vector loads and stores instead of gathers and scatters
#pragma omp simd reduction(+ : partial)
                for (int64_t ow = lo; ow < hi; ++ow) {
                  partial += row[ow] * src[ow];
                  dst[ow] += tap * row[ow];
                }
              } else {
#pragma omp simd reduction(+ : partial)
                for (int64_t ow = lo; ow < hi; ++ow) partial += row[ow] * src[ow * sw];
#pragma omp simd
                for (int64_t ow = lo; ow < hi; ++ow) dst[ow * sw] += tap * row[ow];
              }
            }
            sums[filter + i * g.k_w + j] += partial;
          }
        }
      }
    }
  }
}

// sum over the plane of d y times x shifted by one tap, as kChunk lanes: ``dy`` and ``x`` are
// [rows, pitch] planes (d y zero right of its out_w columns), ``x`` already offset by the tap.
inline Chunk WeightGradTap(const float* dy, int64_t dy_pitch, const float* x, int64_t x_pitch, int64_t out_h,
                           int64_t out_w) {
  Chunk acc = {};
  for (int64_t oh = 0; oh < out_h; ++oh)
    for (int64_t ow = 0; ow < out_w; ow += kChunk)
      acc += LoadChunk(dy + oh * dy_pitch + ow) * LoadChunk(x + oh * x_pitch + ow);
  return acc;
}

// Every tap of a KH x KW kernel in one pass over d y (the KH * KW sums held in registers).
template <int KH, int KW>
void WeightGradPlane(const float* dy, int64_t dy_pitch, const float* x, int64_t x_pitch, int64_t out_h,
                     int64_t out_w, double* tap_sums) {
  Chunk acc[KH * KW] = {};
  for (int64_t oh = 0; oh < out_h; ++oh) {
    for (int64_t ow = 0; ow < out_w; ow += kChunk) {
      const Chunk d = LoadChunk(dy + oh * dy_pitch + ow);
      for (int i = 0; i < KH; ++i)
        for (int j = 0; j < KW; ++j) acc[i * KW + j] += d * LoadChunk(x + (oh + i) * x_pitch + ow + j);
    }
  }
  for (int k = 0; k < KH * KW; ++k) tap_sums[k] += SumChunk(acc[k]);
}

// Stride 1 (see UnitStrideForward): d x is the correlation of d y, zero-padded by the kernel
// size less one, with the flipped filters; d w[o, b, i, j] the sum over the plane of d y times
// the padded x shifted by (i, j); both in kChunk-column chunks held in registers.
void UnitStrideBackward(const GroupedGeometry& g, const float* in, const float* filters, const float* dy, float* dx,
                        double* sums) {
  const int64_t taps = g.k_h * g.k_w, in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  const int64_t kh = g.k_h, kw = g.k_w;
  PaddedPlanes xp(g.group_in, g.in_h, g.in_w, g.pad_h, g.pad_w, g.pad_h, g.pad_w);
  PaddedPlanes dp(g.group_out, g.out_h, g.out_w, kh - 1, kw - 1, kh - 1, kw - 1);
  std::vector<float> flipped(g.out_channels * g.group_in * taps);  // w[o, b, kh-1-i, kw-1-j]
  for (int64_t f = 0; f < g.out_channels * g.group_in; ++f)
    for (int64_t k = 0; k < taps; ++k) flipped[f * taps + k] = filters[f * taps + taps - 1 - k];
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t q = 0; q < g.channels / g.group_in; ++q) {
      const int64_t first_in = q * g.group_in, first_out = q * g.group_out;
      for (int64_t b = 0; b < g.group_in; ++b)
        xp.Put(b, in + (n * g.channels + first_in + b) * in_plane, g.in_h, g.in_w);
      for (int64_t r = 0; r < g.group_out; ++r)
        dp.Put(r, dy + (n * g.out_channels + first_out + r) * out_plane, g.out_h, g.out_w);
      for (int64_t b = 0; b < g.group_in; ++b) {
        float* dxp = dx + (n * g.channels + first_in + b) * in_plane;
        for (int64_t ih = 0; ih < g.in_h; ++ih) {
          for (int64_t iw = 0; iw < g.in_w; iw += kChunk) {
            Chunk acc = {};
            for (int64_t r = 0; r < g.group_out; ++r)
              acc = Correlate(dp.Plane(r) + (ih + g.pad_h) * dp.pitch + iw + g.pad_w, dp.pitch,
                              flipped.data() + ((first_out + r) * g.group_in + b) * taps, kh, kw, acc);
            StoreChunk(dxp + ih * g.in_w + iw, acc, g.in_w - iw);
          }
        }
      }
      for (int64_t r = 0; r < g.group_out; ++r) {
        const float* dyp = dp.Plane(r) + (kh - 1) * dp.pitch + kw - 1;  // d y[0, 0]; zeros right of each row
        for (int64_t b = 0; b < g.group_in; ++b) {
          double* tap_sums = sums + ((first_out + r) * g.group_in + b) * taps;
          if (kh == 3 && kw == 3) {
            WeightGradPlane<3, 3>(dyp, dp.pitch, xp.Plane(b), xp.pitch, g.out_h, g.out_w, tap_sums);
          } else {
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j)
                tap_sums[i * kw + j] += SumChunk(WeightGradTap(dyp, dp.pitch, xp.Plane(b) + i * xp.pitch + j, xp.pitch,
                                                               g.out_h, g.out_w));
          }
        }
      }
    }
  }
}

}  // namespace

// dx[n, c, ih, iw] = sum of w[o, b, i, j] * dy[n, o, oh, ow] over the (o, oh, ow, i, j) that read
// it; dw[o, b, i, j] = sum over n, oh, ow of dy[n, o, oh, ow] * x[n, q * Cg + b, oh * sh - ph + i,
// ow * sw - pw + j] (per-plane float sums, added over the batch in double and rounded once).
std::vector<paddle::Tensor> GroupedBackward(const paddle::Tensor& x, const paddle::Tensor& w,
                                            const paddle::Tensor& grad_out, int stride_h, int stride_w,
                                            int pad_h, int pad_w, int groups) {
  const GroupedGeometry g = Geometry(x, w, stride_h, stride_w, pad_h, pad_w, groups);
  PD_CHECK(grad_out.dtype() == paddle::DataType::FLOAT32 && grad_out.shape().size() == 4 &&
               grad_out.shape()[0] == g.batch && grad_out.shape()[1] == g.out_channels &&
               grad_out.shape()[2] == g.out_h && grad_out.shape()[3] == g.out_w,
           "pfc_grouped_conv2d_grad: grad_out must be float32 [N, O, out_h, out_w]");
  auto grad_x = paddle::empty(x.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto grad_w = paddle::empty(w.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  float* dx = grad_x.data<float>();
  std::vector<double> sums(w.numel(), 0.0);
  if (stride_h == 1 && stride_w == 1) {
    UnitStrideBackward(g, x.data<float>(), w.data<float>(), grad_out.data<float>(), dx, sums.data());
  } else {
    std::fill(dx, dx + grad_x.numel(), 0.0f);
    StridedBackward(g, x.data<float>(), w.data<float>(), grad_out.data<float>(), dx, sums.data());
  }
  float* dw = grad_w.data<float>();
  for (int64_t k = 0; k < w.numel(); ++k) dw[k] = static_cast<float>(sums[k]);
  return {grad_x, grad_w};
}

std::vector<std::vector<int64_t>> GroupedShape(const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                                               int stride_h, int stride_w, int pad_h, int pad_w, int) {
  auto out_size = [](int64_t in, int64_t k, int stride, int pad) {
    return in < 0 ? int64_t{-1} : (in + 2 * pad - k) / stride + 1;
  };
  return {{x[0], w[0], out_size(x[2], w[2], stride_h, pad_h), out_size(x[3], w[3], stride_w, pad_w)}};
}

std::vector<paddle::DataType> GroupedDtype(const paddle::DataType& x, const paddle::DataType&) { return {x}; }

std::vector<std::vector<int64_t>> GroupedGradShape(const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                                                   const std::vector<int64_t>&, int, int, int, int, int) {
  return {x, w};
}

std::vector<paddle::DataType> GroupedGradDtype(const paddle::DataType& x, const paddle::DataType& w,
                                               const paddle::DataType&) {
  return {x, w};
}

PD_BUILD_OP(pfc_grouped_conv2d)
    .Inputs({"X", "W"})
    .Outputs({"Out"})
    .Attrs({"stride_h: int", "stride_w: int", "pad_h: int", "pad_w: int", "groups: int"})
    .SetKernelFn(PD_KERNEL(GroupedForward))
    .SetInferShapeFn(PD_INFER_SHAPE(GroupedShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(GroupedDtype));

PD_BUILD_GRAD_OP(pfc_grouped_conv2d)
    .Inputs({"X", "W", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X"), paddle::Grad("W")})
    .Attrs({"stride_h: int", "stride_w: int", "pad_h: int", "pad_w: int", "groups: int"})
    .SetKernelFn(PD_KERNEL(GroupedBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(GroupedGradShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(GroupedGradDtype));
