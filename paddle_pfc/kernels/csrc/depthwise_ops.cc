// Depthwise and few-channel grouped 2-D convolution on NHWC tensors (channels last), with its
// backward: mobilefacenet's strided depthwise layers, its GDC (a 7x7 kernel over a 7x7 map) and
// its first grouped layer (64 groups of 2 channels), where oneDNN 3.6 falls back to slow generic
// code (AMD EPYC Zen 5, one rank, batch 32, 2026-11-25, ONEDNN_VERBOSE): its bfloat16 backward of
// a strided depthwise layer is a generic kernel ~100x slower than float32, so those layers ran in
// float32 (~17 ms a step); the GDC's d weight took 8 ms (bfloat16) or 3.4 ms (float32) for
// ~0.8 M multiply-adds; grouped layers are im2col + GEMM. Built on first use by
// paddle_pfc/kernels/native_ops.py, which states the contract.
//
// Every loop runs along the channels, 16 at a time (one AVX-512 register; two AVX2 ones), so each
// tap is one vector multiply-add on contiguous memory; with G channels a group (G divides 16, and
// a group's G outputs read its G inputs) a tap is G of them, each on the input vector permuted so
// that lane l holds input channel (l / G) * G + q of its group. x, the output and their gradients are
// float32, or bfloat16 (stored rounded to nearest even, like Paddle's cast); the weight is float32.
// With bf16 the products' operands (x, weight, d output) are rounded to bfloat16 first, as
// oneDNN's bfloat16 convolutions do; sums are float32 (d weight: per sample, then float64 over the
// batch).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "paddle_ext.h"

namespace {

constexpr int64_t kLanes = 16;
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));
typedef uint32_t Bits __attribute__((vector_size(kLanes * sizeof(uint32_t))));
typedef int32_t Mask __attribute__((vector_size(kLanes * sizeof(int32_t))));
typedef uint16_t Half __attribute__((vector_size(kLanes * sizeof(uint16_t))));

// bfloat16 bits of v rounded to nearest even (a NaN kept a NaN), in the low half of each lane.
inline Bits RoundedBits(Vec v) {
  const Bits bits = reinterpret_cast<Bits&>(v);
  const Bits rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
  const Mask nan = v != v;
  return nan ? (bits >> 16) | 0x40u : rounded;
}

// v rounded to the nearest bfloat16 value, as float32.
inline Vec RoundToBf16(Vec v) {
  const Bits bits = RoundedBits(v) << 16;
  return reinterpret_cast<const Vec&>(bits);
}

// `count` <= kLanes values from p (the rest zero); a whole vector is one load (a constant-size copy).
template <typename V, typename T>
inline V LoadLanes(const T* p, int64_t count) {
  V v = {};
  if (count == kLanes) {
    std::memcpy(&v, p, sizeof(V));
  } else {
    std::memcpy(&v, p, count * sizeof(T));
  }
  return v;
}
template <typename V, typename T>
inline void StoreLanes(T* p, const V& v, int64_t count) {
  if (count == kLanes) {
    std::memcpy(p, &v, sizeof(V));
  } else {
    std::memcpy(p, &v, count * sizeof(T));
  }
}
inline Vec Load(const float* p, int64_t count) { return LoadLanes<Vec>(p, count); }
inline Vec Load(const uint16_t* p, int64_t count) {
  const Bits bits = __builtin_convertvector(LoadLanes<Half>(p, count), Bits) << 16;
  return reinterpret_cast<const Vec&>(bits);
}
inline void Store(float* p, Vec v, int64_t count) { StoreLanes(p, v, count); }
inline void Store(uint16_t* p, Vec v, int64_t count) {
  StoreLanes(p, __builtin_convertvector(RoundedBits(v), Half), count);
}

// An operand as the products read it: rounded to bfloat16 with bf16 (a no-op for bfloat16 data).
template <typename T, bool kBf16>
inline Vec Operand(const T* p, int64_t count) {
  const Vec v = Load(p, count);
  if constexpr (kBf16 && std::is_same_v<T, float>) return RoundToBf16(v);
  return v;
}

struct Geometry {
  int64_t n, h, w, c, kh, kw, sh, sw, ph, pw, oh, ow, group;  // group: channels a group (1: depthwise)
  int64_t padded_c() const { return (c + kLanes - 1) / kLanes * kLanes; }
  int64_t table() const { return kh * kw * padded_c(); }  // floats of one input-of-group's taps
};

Geometry Checked(const paddle::Tensor& x, const paddle::Tensor& w, int stride_h, int stride_w, int pad_h,
                 int pad_w, int groups, bool bf16, bool bf16_out) {
  PD_CHECK(x.is_cpu() && w.is_cpu(), "pfc_depthwise_conv2d runs on CPU tensors");
  const bool bf16_x = x.dtype() == paddle::DataType::BFLOAT16;
  PD_CHECK((x.dtype() == paddle::DataType::FLOAT32 || (bf16 && bf16_x)) && w.dtype() == paddle::DataType::FLOAT32,
           "pfc_depthwise_conv2d takes a float32 weight and a float32 x (bfloat16 x with bf16 products)");
  PD_CHECK(bf16 || !bf16_out, "pfc_depthwise_conv2d: a bfloat16 output needs bf16 products");
  const auto& s = x.shape();
  const auto& f = w.shape();
  PD_CHECK(s.size() == 4 && f.size() == 4 && groups >= 1 && s[3] % groups == 0 && f[0] == s[3] &&
               f[1] * groups == s[3] && kLanes % f[1] == 0,
           "pfc_depthwise_conv2d: x must be [N, H, W, C], weight [C, C / groups, kh, kw] with C / groups dividing 16");
  PD_CHECK(f[2] >= 1 && f[3] >= 1 && stride_h >= 1 && stride_w >= 1 && pad_h >= 0 && pad_w >= 0,
           "pfc_depthwise_conv2d: bad kernel size, stride or padding");
  Geometry g{s[0], s[1], s[2], s[3], f[2], f[3], stride_h, stride_w, pad_h, pad_w, 0, 0, f[1]};
  PD_CHECK(g.h + 2 * g.ph >= g.kh && g.w + 2 * g.pw >= g.kw, "pfc_depthwise_conv2d: kernel larger than the padded input");
  g.oh = (g.h + 2 * g.ph - g.kh) / g.sh + 1;
  g.ow = (g.w + 2 * g.pw - g.kw) / g.sw + 1;
  return g;
}

// The weight [C, G, kh, kw] as tables [G][kh * kw][padded C] (zero beyond C), rounded with bf16.
// Forward (by output channel): table q, lane l = w[l, q]: output l's weight for input (l / G) * G + q.
// Backward data (by input channel): table q, lane l = w[(l / G) * G + q, l % G]: the weight with
// which output (l / G) * G + q read input l.
std::vector<float> Taps(const Geometry& g, const float* w, bool bf16, bool by_input) {
  const int64_t pc = g.padded_c(), taps = g.kh * g.kw;
  std::vector<float> out(g.group * g.table(), 0.0f);
  for (int64_t q = 0; q < g.group; ++q) {
    for (int64_t l = 0; l < g.c; ++l) {
      const int64_t o = by_input ? l / g.group * g.group + q : l, b = by_input ? l % g.group : q;
      for (int64_t t = 0; t < taps; ++t) out[q * g.table() + t * pc + l] = w[(o * g.group + b) * taps + t];
    }
  }
  if (bf16) {
    for (size_t k = 0; k < out.size(); k += kLanes) Store(out.data() + k, RoundToBf16(Load(out.data() + k, kLanes)), kLanes);
  }
  return out;
}

// v permuted within its groups of kGroup lanes so that lane l holds lane (l / kGroup) * kGroup + kQ:
// input channel (l / G) * G + q of lane l's group. The masks are constants, so the compiler emits
// one shuffle a register. Without AVX-512 a vector is two 8-lane registers, and GCC lowers a 16-lane
// shuffle lane by lane through memory (a runtime mask: mobilefacenet's grouped layer took 520 ms a
// step, AMD EPYC Zen 3 [AVX2]); there each half is shuffled from the two halves instead
// (vpermilps / vbroadcastss).
template <int kGroup, int kQ, int kFirst, int... kLane>
constexpr auto LaneSources(std::integer_sequence<int, kLane...>) {
  typedef int32_t Indices __attribute__((vector_size(sizeof...(kLane) * sizeof(int32_t))));
  return Indices{((kFirst + kLane) / kGroup * kGroup + kQ)...};
}
template <int kGroup, int kQ>
inline Vec Permuted(Vec v) {
  if constexpr (kGroup == 1) {
    return v;
  } else {
#ifdef __AVX512F__
    constexpr auto kSources = LaneSources<kGroup, kQ, 0>(std::make_integer_sequence<int, kLanes>{});
    return __builtin_shuffle(v, kSources);
#else
    typedef float Half8 __attribute__((vector_size(kLanes / 2 * sizeof(float))));
    constexpr auto kLow = LaneSources<kGroup, kQ, 0>(std::make_integer_sequence<int, kLanes / 2>{});
    constexpr auto kHigh = LaneSources<kGroup, kQ, kLanes / 2>(std::make_integer_sequence<int, kLanes / 2>{});
    Half8 half[2];
    std::memcpy(half, &v, sizeof(v));
    const Half8 out[2] = {__builtin_shuffle(half[0], half[1], kLow), __builtin_shuffle(half[0], half[1], kHigh)};
    std::memcpy(&v, out, sizeof(v));
    return v;
#endif
  }
}

// Calls body.template operator()<q>() for q = 0 .. kGroup - 1 (compile-time q: constant masks).
template <int kGroup, typename Body, int... kQ>
[[gnu::always_inline]] inline void ForEachInput(Body&& body, std::integer_sequence<int, kQ...>) {
  (body.template operator()<kQ>(), ...);
}
template <int kGroup, typename Body>
[[gnu::always_inline]] inline void ForEachInput(Body&& body) {
  ForEachInput<kGroup>(body, std::make_integer_sequence<int, kGroup>{});
}

// acc += sum over q < kGroup of (v permuted by q) * table q (depthwise: v * table 0).
template <int kGroup>
[[gnu::always_inline]] inline void AddTap(Vec& acc, Vec v, const float* table, const Geometry& g) {
  ForEachInput<kGroup>([&]<int kQ>() { acc += Permuted<kGroup, kQ>(v) * Load(table + kQ * g.table(), kLanes); });
}

// The input rows (or columns) each output row reads: for output index o, taps [lo, hi) are inside.
struct Window {
  std::vector<int64_t> lo, hi;
  Window(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad) : lo(out), hi(out) {
    for (int64_t o = 0; o < out; ++o) {
      lo[o] = std::max<int64_t>(0, pad - o * stride);
      hi[o] = std::min<int64_t>(k, in + pad - o * stride);
    }
  }
};

// (tap, output index) pairs that read input index i: o * stride - pad + tap = i.
std::vector<std::vector<std::pair<int64_t, int64_t>>> Readers(int64_t in, int64_t out, int64_t k, int64_t stride,
                                                              int64_t pad) {
  std::vector<std::vector<std::pair<int64_t, int64_t>>> readers(in);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t t = 0; t < k; ++t) {
      const int64_t i = o * stride - pad + t;
      if (i >= 0 && i < in) readers[i].emplace_back(t, o);
    }
  }
  return readers;
}

// Channels go in blocks of kBlock vectors (128 on AVX-512) whose sums stay in registers, so each
// tap is kBlock independent multiply-adds; a last partial block goes one vector at a time.
#ifdef __AVX512F__
constexpr int kBlock = 8;
#else
constexpr int kBlock = 4;  // AVX2: a vector is two registers, 16 in all
#endif

// Calls block(c0, vectors, count) over channel blocks [c0, c0 + vectors * kLanes): full blocks of
// kBlock vectors, then single vectors (the last one `count` < kLanes wide when C is not a multiple).
template <typename Block>
[[gnu::always_inline]] inline void ForChannelBlocks(int64_t channels, Block&& block) {
  int64_t c0 = 0;
  for (; c0 + kBlock * kLanes <= channels; c0 += kBlock * kLanes) block.template operator()<kBlock>(c0, kLanes);
  for (; c0 < channels; c0 += kLanes) block.template operator()<1>(c0, std::min(kLanes, channels - c0));
}

// y[n, oh, ow, o] = sum over q, i, j of x[n, oh*sh - ph + i, ow*sw - pw + j, (o / G) * G + q] * w[o, q, i, j].
template <typename In, typename Out, bool kBf16, int kGroup>
void Forward(const Geometry& g, const In* x, const float* taps, Out* y) {
  const Window rows(g.h, g.oh, g.kh, g.sh, g.ph), cols(g.w, g.ow, g.kw, g.sw, g.pw);
  const int64_t pc = g.padded_c();
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t oh = 0; oh < g.oh; ++oh) {
      for (int64_t ow = 0; ow < g.ow; ++ow) {
        Out* out = y + ((n * g.oh + oh) * g.ow + ow) * g.c;
        const In* corner = x + ((n * g.h + oh * g.sh - g.ph) * g.w + ow * g.sw - g.pw) * g.c;
        ForChannelBlocks(g.c, [&]<int B>(int64_t c0, int64_t count) {
          Vec acc[B] = {};
          for (int64_t i = rows.lo[oh]; i < rows.hi[oh]; ++i) {
            for (int64_t j = cols.lo[ow]; j < cols.hi[ow]; ++j) {
              const In* src = corner + (i * g.w + j) * g.c + c0;
              const float* tap = taps + (i * g.kw + j) * pc + c0;
              for (int b = 0; b < B; ++b) {
                AddTap<kGroup>(acc[b], Operand<In, kBf16>(src + b * kLanes, count), tap + b * kLanes, g);
              }
            }
          }
          for (int b = 0; b < B; ++b) Store(out + c0 + b * kLanes, acc[b], count);
        });
      }
    }
  }
}

// dx[n, ih, iw, c] = sum over the outputs o of c's group and the (i, oh), (j, ow) that read (ih, iw)
// of dy[n, oh, ow, o] * w[o, c % G, i, j].
template <typename Grad, typename In, bool kBf16, int kGroup>
void BackwardData(const Geometry& g, const Grad* dy, const float* taps, In* dx) {
  const auto rows = Readers(g.h, g.oh, g.kh, g.sh, g.ph), cols = Readers(g.w, g.ow, g.kw, g.sw, g.pw);
  const int64_t pc = g.padded_c();
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t ih = 0; ih < g.h; ++ih) {
      for (int64_t iw = 0; iw < g.w; ++iw) {
        In* out = dx + ((n * g.h + ih) * g.w + iw) * g.c;
        ForChannelBlocks(g.c, [&]<int B>(int64_t c0, int64_t count) {
          Vec acc[B] = {};
          for (const auto& [i, oh] : rows[ih]) {
            for (const auto& [j, ow] : cols[iw]) {
              const Grad* src = dy + ((n * g.oh + oh) * g.ow + ow) * g.c + c0;
              const float* tap = taps + (i * g.kw + j) * pc + c0;
              for (int b = 0; b < B; ++b) {
                AddTap<kGroup>(acc[b], Operand<Grad, kBf16>(src + b * kLanes, count), tap + b * kLanes, g);
              }
            }
          }
          for (int b = 0; b < B; ++b) Store(out + c0 + b * kLanes, acc[b], count);
        });
      }
    }
  }
}

// dw[o, q, i, j] = sum over n, oh, ow of dy[n, oh, ow, o] * x[n, oh*sh - ph + i, ow*sw - pw + j, (o / G) * G + q].
template <typename Grad, typename In, bool kBf16, int kGroup>
void BackwardWeights(const Geometry& g, const Grad* dy, const In* x, float* dw) {
  const Window rows(g.h, g.oh, g.kh, g.sh, g.ph), cols(g.w, g.ow, g.kw, g.sw, g.pw);
  const int64_t pc = g.padded_c(), taps = g.kh * g.kw, table = g.table() / kLanes;
  std::vector<Vec> sample(g.group * table);  // one sample's float32 sums, [q][tap][channel vector]
  std::vector<double> total(g.group * g.table(), 0.0);
  for (int64_t n = 0; n < g.n; ++n) {
    std::fill(sample.begin(), sample.end(), Vec{});
    for (int64_t oh = 0; oh < g.oh; ++oh) {
      for (int64_t ow = 0; ow < g.ow; ++ow) {
        const Grad* grad = dy + ((n * g.oh + oh) * g.ow + ow) * g.c;
        const In* corner = x + ((n * g.h + oh * g.sh - g.ph) * g.w + ow * g.sw - g.pw) * g.c;
        ForChannelBlocks(g.c, [&]<int B>(int64_t c0, int64_t count) {
          Vec d[B];
          for (int b = 0; b < B; ++b) d[b] = Operand<Grad, kBf16>(grad + c0 + b * kLanes, count);
          for (int64_t i = rows.lo[oh]; i < rows.hi[oh]; ++i) {
            for (int64_t j = cols.lo[ow]; j < cols.hi[ow]; ++j) {
              const In* src = corner + (i * g.w + j) * g.c + c0;
              Vec* sums = sample.data() + ((i * g.kw + j) * pc + c0) / kLanes;
              for (int b = 0; b < B; ++b) {
                const Vec v = Operand<In, kBf16>(src + b * kLanes, count);
                ForEachInput<kGroup>([&]<int kQ>() { sums[kQ * table + b] += d[b] * Permuted<kGroup, kQ>(v); });
              }
            }
          }
        });
      }
    }
    const float* values = reinterpret_cast<const float*>(sample.data());
    for (size_t k = 0; k < total.size(); ++k) total[k] += values[k];
  }
  for (int64_t o = 0; o < g.c; ++o) {
    for (int64_t q = 0; q < g.group; ++q) {
      for (int64_t t = 0; t < taps; ++t) dw[(o * g.group + q) * taps + t] = static_cast<float>(total[q * g.table() + t * pc + o]);
    }
  }
}

paddle::DataType TypeOf(bool bf16) { return bf16 ? paddle::DataType::BFLOAT16 : paddle::DataType::FLOAT32; }

template <typename T>
T* Data(paddle::Tensor& t) { return static_cast<T*>(t.data()); }
template <typename T>
const T* Data(const paddle::Tensor& t) { return static_cast<const T*>(t.data()); }

// Calls run.template operator()<G>() for the geometry's group size G (1, 2, 4, 8 or 16: a compile-time
// count, so a tap's G products unroll with their sums in registers).
template <typename Run>
void ForGroupSize(const Geometry& g, Run&& run) {
  switch (g.group) {
    case 1: return run.template operator()<1>();
    case 2: return run.template operator()<2>();
    case 4: return run.template operator()<4>();
    case 8: return run.template operator()<8>();
    default: return run.template operator()<16>();
  }
}

template <typename In, typename Out, bool kBf16>
void RunForward(const Geometry& g, const paddle::Tensor& x, const std::vector<float>& taps, paddle::Tensor& out) {
  ForGroupSize(g, [&]<int G>() { Forward<In, Out, kBf16, G>(g, Data<In>(x), taps.data(), Data<Out>(out)); });
}

template <typename Grad, typename In, bool kBf16>
void RunBackward(const Geometry& g, const paddle::Tensor& x, const paddle::Tensor& grad_out,
                 const std::vector<float>& taps, paddle::Tensor& grad_x, paddle::Tensor& grad_w) {
  ForGroupSize(g, [&]<int G>() {
    BackwardData<Grad, In, kBf16, G>(g, Data<Grad>(grad_out), taps.data(), Data<In>(grad_x));
    BackwardWeights<Grad, In, kBf16, G>(g, Data<Grad>(grad_out), Data<In>(x), Data<float>(grad_w));
  });
}

}  // namespace

std::vector<paddle::Tensor> DepthwiseForward(const paddle::Tensor& x, const paddle::Tensor& w, int stride_h,
                                             int stride_w, int pad_h, int pad_w, int groups, bool bf16,
                                             bool bf16_out) {
  const Geometry g = Checked(x, w, stride_h, stride_w, pad_h, pad_w, groups, bf16, bf16_out);
  auto out = paddle::empty({g.n, g.oh, g.ow, g.c}, TypeOf(bf16_out), paddle::CPUPlace());
  const std::vector<float> taps = Taps(g, w.data<float>(), bf16, false);
  if (x.dtype() == paddle::DataType::BFLOAT16) {  // bf16 products
    (bf16_out ? RunForward<uint16_t, uint16_t, true> : RunForward<uint16_t, float, true>)(g, x, taps, out);
  } else if (bf16) {
    (bf16_out ? RunForward<float, uint16_t, true> : RunForward<float, float, true>)(g, x, taps, out);
  } else {
    RunForward<float, float, false>(g, x, taps, out);
  }
  return {out};
}

std::vector<paddle::Tensor> DepthwiseBackward(const paddle::Tensor& x, const paddle::Tensor& w,
                                              const paddle::Tensor& grad_out, int stride_h, int stride_w, int pad_h,
                                              int pad_w, int groups, bool bf16, bool bf16_out) {
  const Geometry g = Checked(x, w, stride_h, stride_w, pad_h, pad_w, groups, bf16, bf16_out);
  const std::vector<int64_t> out_shape{g.n, g.oh, g.ow, g.c};
  PD_CHECK(grad_out.dtype() == TypeOf(bf16_out) && grad_out.shape() == out_shape,
           "pfc_depthwise_conv2d_grad: grad_out must be shaped and typed like the output");
  auto grad_x = paddle::empty(x.shape(), x.dtype(), paddle::CPUPlace());
  auto grad_w = paddle::empty(w.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  const std::vector<float> taps = Taps(g, w.data<float>(), bf16, true);
  if (x.dtype() == paddle::DataType::BFLOAT16) {
    (bf16_out ? RunBackward<uint16_t, uint16_t, true> : RunBackward<float, uint16_t, true>)(g, x, grad_out, taps,
                                                                                           grad_x, grad_w);
  } else if (bf16) {
    (bf16_out ? RunBackward<uint16_t, float, true> : RunBackward<float, float, true>)(g, x, grad_out, taps, grad_x,
                                                                                     grad_w);
  } else {
    RunBackward<float, float, false>(g, x, grad_out, taps, grad_x, grad_w);
  }
  return {grad_x, grad_w};
}

std::vector<std::vector<int64_t>> DepthwiseShape(const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                                                 int stride_h, int stride_w, int pad_h, int pad_w, int, bool, bool) {
  auto out_size = [](int64_t in, int64_t k, int stride, int pad) {
    return in < 0 ? int64_t{-1} : (in + 2 * pad - k) / stride + 1;
  };
  return {{x[0], out_size(x[1], w[2], stride_h, pad_h), out_size(x[2], w[3], stride_w, pad_w), x[3]}};
}

std::vector<paddle::DataType> DepthwiseDtype(const paddle::DataType&, const paddle::DataType&, int, int, int, int,
                                             int, bool, bool bf16_out) {
  return {TypeOf(bf16_out)};
}

std::vector<std::vector<int64_t>> DepthwiseGradShape(const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                                                     const std::vector<int64_t>&, int, int, int, int, int, bool, bool) {
  return {x, w};
}

std::vector<paddle::DataType> DepthwiseGradDtype(const paddle::DataType& x, const paddle::DataType&,
                                                 const paddle::DataType&, int, int, int, int, int, bool, bool) {
  return {x, paddle::DataType::FLOAT32};
}

PD_BUILD_OP(pfc_depthwise_conv2d)
    .Inputs({"X", "W"})
    .Outputs({"Out"})
    .Attrs({"stride_h: int", "stride_w: int", "pad_h: int", "pad_w: int", "groups: int", "bf16: bool",
            "bf16_out: bool"})
    .SetKernelFn(PD_KERNEL(DepthwiseForward))
    .SetInferShapeFn(PD_INFER_SHAPE(DepthwiseShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(DepthwiseDtype));

PD_BUILD_GRAD_OP(pfc_depthwise_conv2d)
    .Inputs({"X", "W", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X"), paddle::Grad("W")})
    .Attrs({"stride_h: int", "stride_w: int", "pad_h: int", "pad_w: int", "groups: int", "bf16: bool",
            "bf16_out: bool"})
    .SetKernelFn(PD_KERNEL(DepthwiseBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(DepthwiseGradShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(DepthwiseGradDtype));
