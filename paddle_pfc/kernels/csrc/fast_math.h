// Float math the kernels share, written so that the compiler vectorizes it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

// exp(x) for x <= 0 (a softmax's z - max), written so that the compiler vectorizes it (std::exp
// is a library call per element: a [256, 2048] block's softmax took 2.75 ms with it, 0.23 ms with
// this; vectorizing its selects needs -fno-trapping-math, set by native_ops.py). Cephes' expf:
// x = n ln 2 + r with |r| <= ln 2 / 2, ln 2 in two parts, a degree-5 polynomial for
// exp(r) - 1 - r, 2^n from the exponent bits; within 2 ulp of exp over [-87.3, 0], exactly 1 at
// 0, and 0 below -87.3 (where exp(x) < FLT_MIN: no denormals).
inline float ExpNonPositive(float x) {
  constexpr float kLowest = -87.33654f;  // log(FLT_MIN)
  const float clamped = x < kLowest ? kLowest : x;
  const float n = std::floor(clamped * 1.44269504088896341f + 0.5f);
  const float r = (clamped - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float power;
  std::memcpy(&power, &bits, sizeof(power));
  return x < kLowest ? 0.0f : p * power;
}
