// The attention's row work on AVX-512 registers (transformer_ops.cc's pfc_attention and its grad):
// the scaled softmax of each row of q k^T and its gradient, on rows padded to a multiple of 16
// floats. Compiled only where the build's -march=native CPU reports AVX-512F (kAttentionAvx512 says
// which); elsewhere the attention's loops written for the compiler run instead.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__AVX512F__)
#include <immintrin.h>

constexpr bool kAttentionAvx512 = true;

namespace attention_avx512 {

constexpr int64_t kLanes = 16;

// ExpNonPositive (fast_math.h) of 16 lanes: the same reduction x = n ln 2 + r and polynomial (fused
// multiply-adds: within 2 ulp of exp as it is), 2^n by scalef, 0 below log(FLT_MIN).
inline __m512 Exp16(__m512 x) {
  const __m512 lowest = _mm512_set1_ps(-87.33654f);
  const __mmask16 underflow = _mm512_cmp_ps_mask(x, lowest, _CMP_LT_OQ);
  const __m512 clamped = _mm512_max_ps(x, lowest);
  const __m512 n = _mm512_floor_ps(_mm512_fmadd_ps(clamped, _mm512_set1_ps(1.44269504088896341f), _mm512_set1_ps(0.5f)));
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), clamped);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_maskz_scalef_ps(static_cast<__mmask16>(~underflow), p, n);
}

// Each of `rows` rows (stride width, a multiple of 16) replaced by softmax(scale * row) over its
// first t entries, zeros past t.
inline void SoftmaxRows(float* p, int64_t rows, int64_t t, int64_t width, float scale) {
  const int64_t full = t / kLanes;
  const __mmask16 tail = static_cast<__mmask16>((1u << (t % kLanes)) - 1u);
  const __m512 scales = _mm512_set1_ps(scale);
  for (int64_t r = 0; r < rows; ++r) {
    float* row = p + r * width;
    __m512 top = _mm512_set1_ps(-INFINITY);
    for (int64_t v = 0; v < full; ++v) top = _mm512_max_ps(top, _mm512_loadu_ps(row + v * kLanes));
    if (tail) top = _mm512_mask_max_ps(top, tail, top, _mm512_loadu_ps(row + full * kLanes));
    const __m512 shift = _mm512_set1_ps(_mm512_reduce_max_ps(top) * scale);
    __m512 sum = _mm512_setzero_ps();
    for (int64_t v = 0; v < full; ++v) {
      const __m512 e = Exp16(_mm512_fmsub_ps(_mm512_loadu_ps(row + v * kLanes), scales, shift));
      _mm512_storeu_ps(row + v * kLanes, e);
      sum = _mm512_add_ps(sum, e);
    }
    if (tail) {
      const __m512 e = _mm512_maskz_mov_ps(tail, Exp16(_mm512_fmsub_ps(_mm512_loadu_ps(row + full * kLanes), scales, shift)));
      _mm512_storeu_ps(row + full * kLanes, e);
      sum = _mm512_add_ps(sum, e);
    }
    const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
    const int64_t stored = full + (tail ? 1 : 0);
    for (int64_t v = 0; v < stored; ++v) _mm512_storeu_ps(row + v * kLanes, _mm512_mul_ps(_mm512_loadu_ps(row + v * kLanes), inv));
    for (int64_t v = stored; v < width / kLanes; ++v) _mm512_storeu_ps(row + v * kLanes, _mm512_setzero_ps());
  }
}

// Each of `rows` rows of d P (stride width) replaced by d S = scale * P * (d P - sum(d P * P)),
// P's rows at the same stride (zeros past t, so d S is zero there too).
inline void SoftmaxGradRows(const float* p, float* dp, int64_t rows, int64_t width, float scale) {
  const __m512 scales = _mm512_set1_ps(scale);
  for (int64_t r = 0; r < rows; ++r) {
    const float* pr = p + r * width;
    float* row = dp + r * width;
    __m512 dots = _mm512_setzero_ps();
    for (int64_t v = 0; v < width; v += kLanes) dots = _mm512_fmadd_ps(_mm512_loadu_ps(row + v), _mm512_loadu_ps(pr + v), dots);
    const __m512 dot = _mm512_set1_ps(_mm512_reduce_add_ps(dots));
    for (int64_t v = 0; v < width; v += kLanes) {
      const __m512 scaled = _mm512_mul_ps(scales, _mm512_loadu_ps(pr + v));
      _mm512_storeu_ps(row + v, _mm512_mul_ps(scaled, _mm512_sub_ps(_mm512_loadu_ps(row + v), dot)));
    }
  }
}

}  // namespace attention_avx512

#else
constexpr bool kAttentionAvx512 = false;
#endif
