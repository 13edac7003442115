// CPU kernels for the per-block work on class centers that Paddle's generic CPU element-wise ops
// do ~10x slower than memory allows (measured on a [2000, 512] block: 2.5 ms for h * w against
// 0.26 ms in numpy). Each kernel makes one pass over its rows; the block's float32 product calls the
// MKL Paddle ships so that the rows' norms ride along (BlockLogits). Built on first use by
// paddle_pfc/kernels/native_ops.py (paddle.utils.cpp_extension); the Python module states the contracts.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "fast_math.h"
#include "paddle_ext.h"
#include "paddle/phi/common/bfloat16.h"
#include "shared_library.h"

namespace {

using bfloat16 = phi::dtype::bfloat16;

void CheckCpuFloat32(const paddle::Tensor& t, const char* name) {
  PD_CHECK(t.is_cpu(), name, " must be a CPU tensor");
  PD_CHECK(t.dtype() == paddle::DataType::FLOAT32, name, " must be float32");
}

// Float32 `bits` rounded to the nearest bfloat16 (ties to even): the result is the upper half (the
// lower half is garbage; meaningless for a NaN, see IsNanBits).
inline uint32_t RoundedBfloat16Bits(uint32_t bits) { return bits + 0x7FFFu + ((bits >> 16) & 1u); }

// True for the bits of a float32 NaN.
inline bool IsNanBits(uint32_t bits) { return (bits & 0x7FFFFFFFu) > 0x7F800000u; }

// x rounded to the nearest bfloat16 (ties to even; NaN stays NaN), as a float: what Paddle's cast
// to bfloat16 and back gives, in a form the compiler vectorizes.
inline float RoundToBfloat16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  bits = IsNanBits(bits) ? bits : RoundedBfloat16Bits(bits) & 0xFFFF0000u;
  float out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}

// The float32 value of a stored element, and a float32 value stored (bfloat16: rounded to nearest,
// ties to even, every NaN 0x7FFF, as phi's CPU conversion gives them) in forms the compiler
// vectorizes (phi's own conversion branches on the value's class, element by element).
inline float Widen(float x) { return x; }

inline float Widen(bfloat16 x) {
  const uint32_t bits = static_cast<uint32_t>(x.x) << 16;
  float out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}

inline void Store(float value, float* out) { *out = value; }

inline void Store(float value, bfloat16* out) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  out->x = IsNanBits(bits) ? uint16_t{0x7FFF} : static_cast<uint16_t>(RoundedBfloat16Bits(bits) >> 16);
}

// The squared norm of one row of `dim` values (float32 values of float or bfloat16 storage).
template <typename T>
inline float SquaredNorm(const T* w, int64_t dim) {
  float squares = 0.0f;
#pragma omp simd reduction(+ : squares)
  for (int64_t d = 0; d < dim; ++d) {
    const float p = Widen(w[d]);
    squares += p * p;
  }
  return squares;
}

// 1 / max(sqrt(squares), eps): a row's inverse norm, clipped like Paddle's clip (NaN stays NaN).
inline float ClippedInverseNorm(float squares, float eps) {
  const float norm = std::sqrt(squares);
  return 1.0f / (norm < eps ? eps : norm);
}

}  // namespace

// out[j] = 1 / max(|rows[j]|, eps) for float32 or bfloat16 rows [c, D]; with round_bfloat16, the
// norms of float32 rows' values rounded to bfloat16 (the rows the bfloat16 products multiply).
std::vector<paddle::Tensor> InverseRowNorm(const paddle::Tensor& rows, float eps, bool round_bfloat16) {
  PD_CHECK(rows.is_cpu() && (rows.dtype() == paddle::DataType::FLOAT32 || rows.dtype() == paddle::DataType::BFLOAT16),
           "rows must be a float32 or bfloat16 CPU tensor");
  PD_CHECK(rows.shape().size() == 2, "rows must be [c, D]");
  const int64_t count = rows.shape()[0], dim = rows.shape()[1];
  auto out = paddle::empty({count}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  float* inv = out.data<float>();
  if (rows.dtype() == paddle::DataType::BFLOAT16) {
    const bfloat16* w = rows.data<bfloat16>();
    for (int64_t j = 0; j < count; ++j) inv[j] = ClippedInverseNorm(SquaredNorm(w + j * dim, dim), eps);
    return {out};
  }
  const float* w = rows.data<float>();
  for (int64_t j = 0; j < count; ++j) {
    const float* wj = w + j * dim;
    float squares = 0.0f;
    if (round_bfloat16) {
#pragma omp simd reduction(+ : squares)
      for (int64_t d = 0; d < dim; ++d) {
        const float v = RoundToBfloat16(wj[d]);
        squares += v * v;
      }
    } else {
      squares = SquaredNorm(wj, dim);
    }
    inv[j] = ClippedInverseNorm(squares, eps);
  }
  return {out};
}

std::vector<std::vector<int64_t>> InverseRowNormShape(const std::vector<int64_t>& rows) { return {{rows[0]}}; }

std::vector<paddle::DataType> InverseRowNormDtype(const paddle::DataType&) { return {paddle::DataType::FLOAT32}; }

PD_BUILD_OP(pfc_inverse_row_norm)
    .Inputs({"Rows"})
    .Outputs({"InvNorm"})
    .Attrs({"eps: float", "round_bfloat16: bool"})
    .SetKernelFn(PD_KERNEL(InverseRowNorm))
    .SetInferShapeFn(PD_INFER_SHAPE(InverseRowNormShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(InverseRowNormDtype));

namespace {

// cblas_sgemm of the MKL that Paddle's own float32 matmul calls (paddle/libs/libmklml_intel.so; the
// same shared object, so the same CPU dispatch and thread settings), found at run time, with MKL's
// packed-operand entry points (cblas_sgemm_pack_get_size / _pack / _compute; null where absent).
using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                       int);
using SgemmPackGetSize = size_t (*)(int, int, int, int);
using SgemmPack = void (*)(int, int, int, int, int, int, float, const float*, int, float*);
using SgemmCompute = void (*)(int, int, int, int, int, int, const float*, int, const float*, int, float, float*,
                              int);
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112, kPacked = 151, kAMatrix = 161, kBMatrix = 162;

struct Blas {
  Sgemm sgemm = nullptr;
  SgemmPackGetSize pack_get_size = nullptr;
  SgemmPack pack = nullptr;
  SgemmCompute compute = nullptr;
};

Blas LoadBlas(const std::string& library) {
  Blas blas;
  blas.sgemm = RequiredSymbol<Sgemm>(library, "cblas_sgemm");
  blas.pack_get_size = reinterpret_cast<SgemmPackGetSize>(FindSymbol(library, "cblas_sgemm_pack_get_size"));
  blas.pack = reinterpret_cast<SgemmPack>(FindSymbol(library, "cblas_sgemm_pack"));
  blas.compute = reinterpret_cast<SgemmCompute>(FindSymbol(library, "cblas_sgemm_compute"));
  if (blas.pack_get_size == nullptr || blas.pack == nullptr || blas.compute == nullptr) {
    blas.pack_get_size = nullptr;
    blas.pack = nullptr;
    blas.compute = nullptr;
  }
  return blas;
}

// oneDNN's row-major dnnl_sgemm (returns dnnl_status_t, 0 on success; dimensions int64_t), from
// `library` (Paddle's paddle/libs/libdnnl.so.3); null for an empty `library`.
using DnnlSgemm = int (*)(char, char, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t,
                          float, float*, int64_t);

DnnlSgemm LoadDnnlSgemm(const std::string& library) {
  return library.empty() ? nullptr : RequiredSymbol<DnnlSgemm>(library, "dnnl_sgemm");
}

// Rows of centers per step of BlockLogits: their norms are taken just before the product reads them
// again, from L2 (512 rows of 512 floats: 1 MiB).
constexpr int64_t kLogitRows = 512;

}  // namespace

// logits = features rows^T ([N, D] x [c, D]^T, MKL's float32 product) and inv_norm[j] = 1 / max(|rows[j]|, eps),
// a few hundred rows at a time: each row's norm is taken while the product is about to read it.
std::vector<paddle::Tensor> BlockLogits(const paddle::Tensor& features, const paddle::Tensor& rows, float eps,
                                        const std::string& library) {
  CheckCpuFloat32(features, "features");
  CheckCpuFloat32(rows, "rows");
  PD_CHECK(features.shape().size() == 2 && rows.shape().size() == 2 && features.shape()[1] == rows.shape()[1],
           "features [N, D] and rows [c, D] must share D");
  const int64_t n = features.shape()[0], count = rows.shape()[0], dim = rows.shape()[1];
  auto logits = paddle::empty({n, count}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto inverse = paddle::empty({count}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  const Sgemm sgemm = LoadBlas(library).sgemm;
  const float* x = features.data<float>();
  const float* w = rows.data<float>();
  float* out = logits.data<float>();
  float* inv = inverse.data<float>();
  for (int64_t j0 = 0; j0 < count; j0 += kLogitRows) {
    const int64_t m = std::min(kLogitRows, count - j0);
    for (int64_t j = j0; j < j0 + m; ++j) inv[j] = ClippedInverseNorm(SquaredNorm(w + j * dim, dim), eps);
    if (n > 0) {
      sgemm(kRowMajor, kNoTrans, kTrans, static_cast<int>(n), static_cast<int>(m), static_cast<int>(dim), 1.0f, x,
            static_cast<int>(dim), w + j0 * dim, static_cast<int>(dim), 0.0f, out + j0, static_cast<int>(count));
    }
  }
  return {logits, inverse};
}

std::vector<std::vector<int64_t>> BlockLogitsShape(const std::vector<int64_t>& features,
                                                   const std::vector<int64_t>& rows) {
  return {{features[0], rows[0]}, {rows[0]}};
}

std::vector<paddle::DataType> BlockLogitsDtype(const paddle::DataType& features, const paddle::DataType&) {
  return {features, features};
}

PD_BUILD_OP(pfc_block_logits)
    .Inputs({"Features", "Rows"})
    .Outputs({"Logits", "InvNorm"})
    .Attrs({"eps: float", "library: std::string"})
    .SetKernelFn(PD_KERNEL(BlockLogits))
    .SetInferShapeFn(PD_INFER_SHAPE(BlockLogitsShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(BlockLogitsDtype));

// Forward of one block, in place: z[i, j] = logits[i, j] * col_scale[j]; z[i, column[i]] =
// target_logit[i] where column[i] >= 0; logits <- exp(z[i, j] - top[i]) with top[i] = max_j z[i, j]
// (the row softmax times the row's sum: no normalising pass); lse[i] <- log sum_j exp z[i, j].
void BlockSoftmax(paddle::Tensor& logits, const paddle::Tensor& col_scale, const paddle::Tensor& column,
                  const paddle::Tensor& target_logit, paddle::Tensor& lse, paddle::Tensor& top) {
  CheckCpuFloat32(logits, "logits");
  CheckCpuFloat32(col_scale, "col_scale");
  CheckCpuFloat32(target_logit, "target_logit");
  CheckCpuFloat32(lse, "lse");
  CheckCpuFloat32(top, "top");
  PD_CHECK(column.is_cpu() && column.dtype() == paddle::DataType::INT64, "column must be int64 on CPU");
  PD_CHECK(logits.shape().size() == 2, "logits must be [N, c]");
  const int64_t rows = logits.shape()[0], cols = logits.shape()[1];
  PD_CHECK(cols > 0, "a block of logits needs at least one column");
  PD_CHECK(col_scale.numel() == cols, "col_scale must hold one value per column");
  PD_CHECK(column.numel() == rows && target_logit.numel() == rows && lse.numel() == rows && top.numel() == rows,
           "column, target_logit, lse and top must hold one value per row");
  float* z = logits.data<float>();
  const float* scale = col_scale.data<float>();
  const int64_t* target = column.data<int64_t>();
  const float* target_value = target_logit.data<float>();
  float* out_lse = lse.data<float>();
  float* out_top = top.data<float>();
  for (int64_t i = 0; i < rows; ++i) {
    float* zi = z + i * cols;
    for (int64_t j = 0; j < cols; ++j) zi[j] *= scale[j];
    if (target[i] >= 0) {
      PD_CHECK(target[i] < cols, "column ", target[i], " outside the block's ", cols, " columns");
      zi[target[i]] = target_value[i];
    }
    float row_top = zi[0];
#pragma omp simd reduction(max : row_top)
    for (int64_t j = 1; j < cols; ++j) row_top = zi[j] > row_top ? zi[j] : row_top;
    float total = 0.0f;
#pragma omp simd reduction(+ : total)
    for (int64_t j = 0; j < cols; ++j) {
      zi[j] = ExpNonPositive(zi[j] - row_top);
      total += zi[j];
    }
    out_top[i] = row_top;
    out_lse[i] = row_top + std::log(total);
  }
}

std::vector<std::vector<int64_t>> BlockSoftmaxShape(const std::vector<int64_t>& logits, const std::vector<int64_t>&,
                                                    const std::vector<int64_t>&, const std::vector<int64_t>&,
                                                    const std::vector<int64_t>& lse, const std::vector<int64_t>& top) {
  return {logits, lse, top};
}

std::vector<paddle::DataType> BlockSoftmaxDtype(const paddle::DataType& logits, const paddle::DataType&,
                                                const paddle::DataType&, const paddle::DataType&,
                                                const paddle::DataType& lse, const paddle::DataType& top) {
  return {logits, lse, top};
}

PD_BUILD_OP(pfc_block_softmax)
    .Inputs({"Logits", "ColScale", "Column", "TargetLogit", "Lse", "Top"})
    .Outputs({"LogitsOut", "LseOut", "TopOut"})
    .SetInplaceMap({{"Logits", "LogitsOut"}, {"Lse", "LseOut"}, {"Top", "TopOut"}})
    .SetKernelFn(PD_KERNEL(BlockSoftmax))
    .SetInferShapeFn(PD_INFER_SHAPE(BlockSoftmaxShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(BlockSoftmaxDtype));

// Backward of one block, in place on its softmax p (up to a row factor, which to_global carries):
// g[i, j] = p[i, j] * to_global[i] * coef * inv_norm[j], and where column[i] >= 0,
// g[i, c] = (p[i, c] * to_global[i] - 1) * slope[i] * coef * inv_norm[c] at c = column[i].
// With product_limit_log2 < 128, every g of magnitude >= 2^product_limit_log2 / 2^ceil(log2(2 N)) (and
// every inf) becomes NaN: then g^T x of rows x with elements in [-1, 1] stays below 2^product_limit_log2
// wherever g is finite, and a NaN reaches every product that reads it.
void SoftmaxGrad(paddle::Tensor& softmax, const paddle::Tensor& to_global, const paddle::Tensor& column,
                 const paddle::Tensor& slope, const paddle::Tensor& coef, const paddle::Tensor& inv_norm,
                 int product_limit_log2) {
  CheckCpuFloat32(softmax, "softmax");
  CheckCpuFloat32(to_global, "to_global");
  CheckCpuFloat32(slope, "slope");
  CheckCpuFloat32(coef, "coef");
  CheckCpuFloat32(inv_norm, "inv_norm");
  PD_CHECK(column.is_cpu() && column.dtype() == paddle::DataType::INT64, "column must be int64 on CPU");
  PD_CHECK(softmax.shape().size() == 2, "softmax must be [N, c]");
  const int64_t rows = softmax.shape()[0], cols = softmax.shape()[1];
  PD_CHECK(inv_norm.numel() == cols, "inv_norm must hold one value per column");
  PD_CHECK(to_global.numel() == rows && column.numel() == rows && slope.numel() == rows,
           "to_global, column and slope must hold one value per row");
  PD_CHECK(coef.numel() == 1, "coef must be a scalar");
  float* p = softmax.data<float>();
  const float* global = to_global.data<float>();
  const int64_t* target = column.data<int64_t>();
  const float* target_slope = slope.data<float>();
  const float* inv = inv_norm.data<float>();
  const float c = coef.data<float>()[0];
  PD_CHECK(product_limit_log2 <= 128, "product_limit_log2 must be <= 128");
  const bool limited = product_limit_log2 < 128;
  int rows_log2 = 0;  // ceil(log2(2 N))
  while ((int64_t{1} << rows_log2) < 2 * rows) ++rows_log2;
  const float bound = std::ldexp(1.0f, product_limit_log2 - rows_log2);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t i = 0; i < rows; ++i) {
    float* pi = p + i * cols;
    const float row_scale = global[i] * c;
    const int64_t t = target[i];
    float target_grad = 0.0f;
    if (t >= 0) {
      PD_CHECK(t < cols, "column ", t, " outside the block's ", cols, " columns");
      target_grad = (pi[t] * global[i] - 1.0f) * target_slope[i] * c;
    }
    if (limited) {
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) {
        const float g = pi[j] * row_scale * inv[j];
        pi[j] = std::fabs(g) < bound ? g : nan;
      }
      if (t >= 0) {
        const float g = target_grad * inv[t];
        pi[t] = std::fabs(g) < bound ? g : nan;
      }
    } else {
      for (int64_t j = 0; j < cols; ++j) pi[j] = pi[j] * row_scale * inv[j];
      if (t >= 0) pi[t] = target_grad * inv[t];
    }
  }
}

std::vector<std::vector<int64_t>> SoftmaxGradShape(const std::vector<int64_t>& softmax, const std::vector<int64_t>&,
                                                   const std::vector<int64_t>&, const std::vector<int64_t>&,
                                                   const std::vector<int64_t>&, const std::vector<int64_t>&) {
  return {softmax};
}

std::vector<paddle::DataType> SoftmaxGradDtype(const paddle::DataType& softmax, const paddle::DataType&,
                                               const paddle::DataType&, const paddle::DataType&,
                                               const paddle::DataType&, const paddle::DataType&) {
  return {softmax};
}

PD_BUILD_OP(pfc_block_dlogits)
    .Inputs({"Softmax", "ToGlobal", "Column", "Slope", "Coef", "InvNorm"})
    .Outputs({"GradOut"})
    .Attrs({"product_limit_log2: int"})
    .SetInplaceMap({{"Softmax", "GradOut"}})
    .SetKernelFn(PD_KERNEL(SoftmaxGrad))
    .SetInferShapeFn(PD_INFER_SHAPE(SoftmaxGradShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(SoftmaxGradDtype));

namespace {

// Asks for the cache lines of `bytes` bytes at `p` ahead of their use (for rows that a scattered
// index reaches: the hardware prefetchers follow a row only after its first misses).
inline void PrefetchBytes(const void* p, int64_t bytes, bool for_write) {
  const char* c = static_cast<const char*>(p);
  for (int64_t off = 0; off < bytes; off += 64) {
    if (for_write) {
      __builtin_prefetch(c + off, 1, 3);
    } else {
      __builtin_prefetch(c + off, 0, 3);
    }
  }
}

// The row `index[r + kRowsAhead]` of a [num_rows, dim] table is prefetched while row r is processed.
constexpr int64_t kRowsAhead = 2;

// The tangent projection of a gradient row h at the center row w (float32 values of its storage):
// the coefficient a = h . w^ and the inverse norm, so that the projected gradient is
// h[d] - a * w[d] * inv (w^ = w * inv, inv = 1 / max(|w|, eps)). |w^| <= 1, so |a| <= |h|: a finite h
// whose elements stay below 2^64 gives a finite projected gradient (an overflowing |w|^2 gives inv 0:
// no projection). Two passes over the row (it stays in L1 for the update that follows).
template <typename T, typename G>
inline void Projection(const T* w, const G* h, int64_t dim, float eps, float* coefficient, float* inverse) {
  const float inv = ClippedInverseNorm(SquaredNorm(w, dim), eps);
  float along = 0.0f;
#pragma omp simd reduction(+ : along)
  for (int64_t d = 0; d < dim; ++d) along += Widen(h[d]) * (Widen(w[d]) * inv);
  *coefficient = along;
  *inverse = inv;
}

// Row index[r], checked against the shard's rows; prefetches row index[r + kRowsAhead] of `weight`
// [num_rows, dim] and of the momentum `state` (rows of `state_row_bytes` bytes; 0: none).
template <typename T>
inline int64_t CheckedRowPrefetchingAhead(const T* weight, const void* state, int64_t state_row_bytes,
                                          const int64_t* index, int64_t r, int64_t count, int64_t num_rows,
                                          int64_t dim) {
  const int64_t row = index[r];
  PD_CHECK(row >= 0 && row < num_rows, "index ", row, " outside the shard's ", num_rows, " rows");
  if (r + kRowsAhead < count) {
    const int64_t ahead = index[r + kRowsAhead];
    if (ahead >= 0 && ahead < num_rows) {
      PrefetchBytes(weight + ahead * dim, dim * static_cast<int64_t>(sizeof(T)), true);
      if (state_row_bytes > 0) {
        PrefetchBytes(static_cast<const char*>(state) + ahead * state_row_bytes, state_row_bytes, true);
      }
    }
  }
  return row;
}

template <typename T, typename G>
void UpdateRows(T* weight, T* velocity, const int64_t* index, int64_t count, int64_t num_rows,
                int64_t dim, const G* grad, float lr, float momentum, bool use_momentum,
                bool nesterov, float weight_decay, float rescale, bool project, float eps) {
  const int64_t velocity_row_bytes = use_momentum ? dim * static_cast<int64_t>(sizeof(T)) : 0;
  for (int64_t r = 0; r < count; ++r) {
    const int64_t row = CheckedRowPrefetchingAhead(weight, velocity, velocity_row_bytes, index, r, count, num_rows, dim);
    T* w = weight + row * dim;
    const G* g = grad + r * dim;
    float along = 0.0f, inv = 0.0f;  // no projection: g[d] - 0 * p * 0 is g[d]
    if (project) Projection(w, g, dim, eps, &along, &inv);
    if (!use_momentum) {
#pragma omp simd
      for (int64_t d = 0; d < dim; ++d) {
        const float p = Widen(w[d]);
        const float gd = Widen(g[d]) - along * (p * inv);
        Store(p - lr * (gd * rescale + weight_decay * p), w + d);
      }
      continue;
    }
    T* v = velocity + row * dim;
#pragma omp simd
    for (int64_t d = 0; d < dim; ++d) {
      const float p = Widen(w[d]);
      const float step = (Widen(g[d]) - along * (p * inv)) * rescale + weight_decay * p;
      const float vel = Widen(v[d]) * momentum + step;
      Store(vel, v + d);
      Store(nesterov ? p - (step + vel * momentum) * lr : p - lr * vel, w + d);
    }
  }
}

// f(rows) with the float32 or bfloat16 gradient rows of `grad` (checked: a CPU tensor of either).
template <typename F>
void WithGradRows(const paddle::Tensor& grad, F&& f) {
  PD_CHECK(grad.is_cpu(), "grad must be a CPU tensor");
  if (grad.dtype() == paddle::DataType::BFLOAT16) {
    f(grad.data<bfloat16>());
  } else {
    PD_CHECK(grad.dtype() == paddle::DataType::FLOAT32, "grad must be float32 or bfloat16");
    f(grad.data<float>());
  }
}

}  // namespace

// weight[index[r]] (and velocity[index[r]]) updated by Paddle's SGD / Momentum rule with the
// float32 or bfloat16 gradient row grad[r] (with `project`: its tangent projection at the row, see
// Projection), in float32 arithmetic, in place.
void SparseUpdate(paddle::Tensor& weight, paddle::Tensor& velocity, const paddle::Tensor& index,
                  const paddle::Tensor& grad, const paddle::Tensor& lr, float momentum, bool use_momentum,
                  bool nesterov, float weight_decay, float rescale, bool project, float eps) {
  CheckCpuFloat32(lr, "lr");
  PD_CHECK(weight.is_cpu() && velocity.is_cpu() && index.is_cpu(), "weight, velocity and index must be on CPU");
  PD_CHECK(index.dtype() == paddle::DataType::INT64, "index must be int64");
  PD_CHECK(weight.dtype() == velocity.dtype(), "weight and velocity must share a dtype");
  PD_CHECK(weight.shape().size() == 2 && grad.shape().size() == 2 && weight.shape()[1] == grad.shape()[1],
           "weight [L, D] and grad [c, D] must share D");
  const int64_t count = index.numel(), num_rows = weight.shape()[0], dim = weight.shape()[1];
  PD_CHECK(grad.shape()[0] == count, "grad must hold one row per index");
  PD_CHECK(!use_momentum || velocity.shape() == weight.shape(), "velocity must be shaped like weight");
  const float rate = lr.data<float>()[0];
  const int64_t* idx = index.data<int64_t>();
  if (weight.dtype() == paddle::DataType::FLOAT32) {
    WithGradRows(grad, [&](const auto* g) {
      UpdateRows(weight.data<float>(), velocity.data<float>(), idx, count, num_rows, dim, g, rate, momentum,
                 use_momentum, nesterov, weight_decay, rescale, project, eps);
    });
  } else if (weight.dtype() == paddle::DataType::BFLOAT16) {
    WithGradRows(grad, [&](const auto* g) {
      UpdateRows(weight.data<bfloat16>(), velocity.data<bfloat16>(), idx, count, num_rows, dim, g, rate, momentum,
                 use_momentum, nesterov, weight_decay, rescale, project, eps);
    });
  } else {
    PD_THROW("weight must be float32 or bfloat16");
  }
}

std::vector<std::vector<int64_t>> SparseUpdateShape(const std::vector<int64_t>& weight,
                                                    const std::vector<int64_t>& velocity,
                                                    const std::vector<int64_t>&, const std::vector<int64_t>&,
                                                    const std::vector<int64_t>&) {
  return {weight, velocity};
}

std::vector<paddle::DataType> SparseUpdateDtype(const paddle::DataType& weight, const paddle::DataType& velocity,
                                                const paddle::DataType&, const paddle::DataType&,
                                                const paddle::DataType&) {
  return {weight, velocity};
}

PD_BUILD_OP(pfc_sparse_update)
    .Inputs({"Weight", "Velocity", "Index", "Grad", "LearningRate"})
    .Outputs({"WeightOut", "VelocityOut"})
    .Attrs({"momentum: float", "use_momentum: bool", "nesterov: bool", "weight_decay: float",
            "rescale: float", "project: bool", "eps: float"})
    .SetInplaceMap({{"Weight", "WeightOut"}, {"Velocity", "VelocityOut"}})
    .SetKernelFn(PD_KERNEL(SparseUpdate))
    .SetInferShapeFn(PD_INFER_SHAPE(SparseUpdateShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(SparseUpdateDtype));

namespace {

// Round to nearest, ties to even, of |x| < 2^22 in float32 arithmetic (adding and taking away
// 1.5 * 2^23 leaves the integer part: the same two sums as the Paddle-ops path; without
// -ffast-math the compiler keeps them).
inline float RoundHalfEven(float x) {
  constexpr float kMagic = 12582912.0f;
  return (x + kMagic) - kMagic;
}

// Momentum of rows stored as int8 codes q with one float32 scale s a row (v = q * s): widen, the
// rule of UpdateRows in float32, then the new row's codes round(v / s') with s' = max|v| / 127
// (s' = 0 and codes 0 for a zero row). `vel` is a float32 scratch row.
template <typename T, typename G>
void UpdateRowsInt8(T* weight, int8_t* codes, float* scales, const int64_t* index, int64_t count,
                    int64_t num_rows, int64_t dim, const G* grad, float lr, float momentum,
                    bool nesterov, float weight_decay, float rescale, bool project, float eps) {
  std::vector<float> vel(dim);
  for (int64_t r = 0; r < count; ++r) {
    const int64_t row = CheckedRowPrefetchingAhead(weight, codes, dim, index, r, count, num_rows, dim);
    T* w = weight + row * dim;
    int8_t* q = codes + row * dim;
    const float s = scales[row];
    const G* g = grad + r * dim;
    float along = 0.0f, inv = 0.0f;
    if (project) Projection(w, g, dim, eps, &along, &inv);
    float absmax = 0.0f;
    for (int64_t d = 0; d < dim; ++d) {
      const float p = Widen(w[d]);
      const float step = (Widen(g[d]) - along * (p * inv)) * rescale + weight_decay * p;
      const float v = (static_cast<float>(q[d]) * s) * momentum + step;
      vel[d] = v;
      absmax = std::max(absmax, std::fabs(v));
      Store(nesterov ? p - (step + v * momentum) * lr : p - lr * v, w + d);
    }
    const float scale = absmax / 127.0f;
    scales[row] = scale;
    for (int64_t d = 0; d < dim; ++d) {
      const float code = scale > 0.0f ? RoundHalfEven(vel[d] / scale) : 0.0f;
      q[d] = static_cast<int8_t>(std::min(127.0f, std::max(-127.0f, code)));
    }
  }
}

}  // namespace

// SparseUpdate's Momentum rule with an int8 momentum and its float32 row scales [L, 1]
// (UpdateRowsInt8), in place; a float32 or bfloat16 gradient.
void SparseUpdateInt8(paddle::Tensor& weight, paddle::Tensor& velocity, paddle::Tensor& scale,
                      const paddle::Tensor& index, const paddle::Tensor& grad, const paddle::Tensor& lr,
                      float momentum, bool nesterov, float weight_decay, float rescale, bool project, float eps) {
  CheckCpuFloat32(lr, "lr");
  CheckCpuFloat32(scale, "scale");
  PD_CHECK(weight.is_cpu() && velocity.is_cpu() && index.is_cpu(), "weight, velocity and index must be on CPU");
  PD_CHECK(index.dtype() == paddle::DataType::INT64, "index must be int64");
  PD_CHECK(velocity.dtype() == paddle::DataType::INT8, "velocity must be int8");
  PD_CHECK(weight.shape().size() == 2 && grad.shape().size() == 2 && weight.shape()[1] == grad.shape()[1],
           "weight [L, D] and grad [c, D] must share D");
  const int64_t count = index.numel(), num_rows = weight.shape()[0], dim = weight.shape()[1];
  PD_CHECK(grad.shape()[0] == count, "grad must hold one row per index");
  PD_CHECK(velocity.shape() == weight.shape(), "velocity must be shaped like weight");
  PD_CHECK(scale.numel() == num_rows, "scale must hold one value per row of weight");
  const float rate = lr.data<float>()[0];
  const int64_t* idx = index.data<int64_t>();
  int8_t* codes = velocity.data<int8_t>();
  float* scales = scale.data<float>();
  if (weight.dtype() == paddle::DataType::FLOAT32) {
    WithGradRows(grad, [&](const auto* g) {
      UpdateRowsInt8(weight.data<float>(), codes, scales, idx, count, num_rows, dim, g, rate, momentum, nesterov,
                     weight_decay, rescale, project, eps);
    });
  } else if (weight.dtype() == paddle::DataType::BFLOAT16) {
    WithGradRows(grad, [&](const auto* g) {
      UpdateRowsInt8(weight.data<bfloat16>(), codes, scales, idx, count, num_rows, dim, g, rate, momentum, nesterov,
                     weight_decay, rescale, project, eps);
    });
  } else {
    PD_THROW("weight must be float32 or bfloat16");
  }
}

std::vector<std::vector<int64_t>> SparseUpdateInt8Shape(const std::vector<int64_t>& weight,
                                                        const std::vector<int64_t>& velocity,
                                                        const std::vector<int64_t>& scale,
                                                        const std::vector<int64_t>&, const std::vector<int64_t>&,
                                                        const std::vector<int64_t>&) {
  return {weight, velocity, scale};
}

std::vector<paddle::DataType> SparseUpdateInt8Dtype(const paddle::DataType& weight, const paddle::DataType& velocity,
                                                    const paddle::DataType& scale, const paddle::DataType&,
                                                    const paddle::DataType&, const paddle::DataType&) {
  return {weight, velocity, scale};
}

PD_BUILD_OP(pfc_sparse_update_int8)
    .Inputs({"Weight", "Velocity", "Scale", "Index", "Grad", "LearningRate"})
    .Outputs({"WeightOut", "VelocityOut", "ScaleOut"})
    .Attrs({"momentum: float", "nesterov: bool", "weight_decay: float", "rescale: float", "project: bool",
            "eps: float"})
    .SetInplaceMap({{"Weight", "WeightOut"}, {"Velocity", "VelocityOut"}, {"Scale", "ScaleOut"}})
    .SetKernelFn(PD_KERNEL(SparseUpdateInt8))
    .SetInferShapeFn(PD_INFER_SHAPE(SparseUpdateInt8Shape))
    .SetInferDtypeFn(PD_INFER_DTYPE(SparseUpdateInt8Dtype));

namespace {

// True when any element of v[0, n) has an exponent field >= `limit` (the format's exponent bits
// of 2^e: inf and NaN have every exponent bit set, so the format's exponent mask finds exactly them).
template <typename Bits>
bool AnyBeyond(const Bits* v, int64_t n, Bits exponent_mask, Bits limit) {
  Bits found = 0;
#pragma omp simd reduction(| : found)
  for (int64_t i = 0; i < n; ++i) found |= static_cast<Bits>((v[i] & exponent_mask) >= limit);
  return found != 0;
}

}  // namespace

// bool [1]: whether any element of the float32 or bfloat16 CPU tensors `values` is inf or NaN, or
// (limit_log2 < 128) of magnitude >= 2^limit_log2. Reads only; one pass over each tensor (stops at
// the first tensor that has one).
std::vector<paddle::Tensor> AnyNonfiniteOp(const std::vector<paddle::Tensor>& values, int limit_log2) {
  PD_CHECK(limit_log2 > -127 && limit_log2 <= 128, "limit_log2 must be in (-127, 128]");
  const uint32_t biased = static_cast<uint32_t>(limit_log2 + 127);
  bool found = false;
  for (const auto& t : values) {
    PD_CHECK(t.is_cpu(), "values must be CPU tensors");
    if (t.dtype() == paddle::DataType::FLOAT32) {
      found = AnyBeyond(reinterpret_cast<const uint32_t*>(t.data<float>()), t.numel(), uint32_t{0x7F800000u},
                        biased << 23);
    } else if (t.dtype() == paddle::DataType::BFLOAT16) {
      found = AnyBeyond(reinterpret_cast<const uint16_t*>(t.data<bfloat16>()), t.numel(), uint16_t{0x7F80u},
                        static_cast<uint16_t>(biased << 7));
    } else {
      PD_THROW("values must be float32 or bfloat16");
    }
    if (found) break;
  }
  auto out = paddle::empty({1}, paddle::DataType::BOOL, paddle::CPUPlace());
  out.data<bool>()[0] = found;
  return {out};
}

std::vector<std::vector<int64_t>> AnyNonfiniteShape(const std::vector<std::vector<int64_t>>&) { return {{1}}; }

std::vector<paddle::DataType> AnyNonfiniteDtype(const std::vector<paddle::DataType>&) {
  return {paddle::DataType::BOOL};
}

PD_BUILD_OP(pfc_any_nonfinite)
    .Inputs({paddle::Vec("Values")})
    .Outputs({"Found"})
    .Attrs({"limit_log2: int"})
    .SetKernelFn(PD_KERNEL(AnyNonfiniteOp))
    .SetInferShapeFn(PD_INFER_SHAPE(AnyNonfiniteShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(AnyNonfiniteDtype));

namespace {

// Row index[r] of a [num_rows, dim] table (index[r] checked), with the row index[r + kRowsAhead]
// prefetched when r + kRowsAhead < count.
template <typename T>
inline const T* IndexedRow(const T* table, const int64_t* index, int64_t r, int64_t count, int64_t num_rows,
                           int64_t dim) {
  const int64_t row = index[r];
  PD_CHECK(row >= 0 && row < num_rows, "index ", row, " outside the table's ", num_rows, " rows");
  if (r + kRowsAhead < count) {
    const int64_t ahead = index[r + kRowsAhead];
    if (ahead >= 0 && ahead < num_rows) PrefetchBytes(table + ahead * dim, dim * static_cast<int64_t>(sizeof(T)), false);
  }
  return table + row * dim;
}

// out = table[index[r]], as IndexedRow reads it.
template <typename T>
inline void CopyIndexedRow(const T* table, const int64_t* index, int64_t r, int64_t count, int64_t num_rows,
                           int64_t dim, T* out) {
  std::memcpy(out, IndexedRow(table, index, r, count, num_rows, dim), dim * static_cast<int64_t>(sizeof(T)));
}

template <typename T>
void GatherRowsOf(const T* table, const int64_t* index, int64_t count, int64_t num_rows, int64_t dim, T* out) {
  for (int64_t r = 0; r < count; ++r) CopyIndexedRow(table, index, r, count, num_rows, dim, out + r * dim);
}

}  // namespace

// out[r] = table[index[r]] for a float32 or bfloat16 table [L, D] and int64 index [c]: out [c, D].
std::vector<paddle::Tensor> GatherRows(const paddle::Tensor& table, const paddle::Tensor& index) {
  PD_CHECK(table.is_cpu() && index.is_cpu(), "table and index must be CPU tensors");
  PD_CHECK(index.dtype() == paddle::DataType::INT64, "index must be int64");
  PD_CHECK(table.shape().size() == 2, "table must be [L, D]");
  const int64_t count = index.numel(), num_rows = table.shape()[0], dim = table.shape()[1];
  auto out = paddle::empty({count, dim}, table.dtype(), paddle::CPUPlace());
  const int64_t* idx = index.data<int64_t>();
  if (table.dtype() == paddle::DataType::FLOAT32) {
    GatherRowsOf<float>(table.data<float>(), idx, count, num_rows, dim, out.data<float>());
  } else if (table.dtype() == paddle::DataType::BFLOAT16) {
    GatherRowsOf<bfloat16>(table.data<bfloat16>(), idx, count, num_rows, dim, out.data<bfloat16>());
  } else {
    PD_THROW("table must be float32 or bfloat16");
  }
  return {out};
}

std::vector<std::vector<int64_t>> GatherRowsShape(const std::vector<int64_t>& table, const std::vector<int64_t>& index) {
  return {{index.empty() ? 1 : index[0], table[1]}};
}

std::vector<paddle::DataType> GatherRowsDtype(const paddle::DataType& table, const paddle::DataType&) { return {table}; }

PD_BUILD_OP(pfc_gather_rows)
    .Inputs({"Table", "Index"})
    .Outputs({"Rows"})
    .SetKernelFn(PD_KERNEL(GatherRows))
    .SetInferShapeFn(PD_INFER_SHAPE(GatherRowsShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(GatherRowsDtype));

// The gather's backward is never part of a training program (the shard takes no gradient: its
// kept rows are updated sparsely); it is registered because Paddle's backward pass asks every op
// before a value it differentiates for one. Refuses to run.
std::vector<paddle::Tensor> GatherRowsGrad(const paddle::Tensor&, const paddle::Tensor&, const paddle::Tensor&) {
  PD_THROW("pfc_gather_rows has no gradient for its table (a sharded center table is updated sparsely)");
}

PD_BUILD_GRAD_OP(pfc_gather_rows)
    .Inputs({"Table", "Index", paddle::Grad("Rows")})
    .Outputs({paddle::Grad("Table")})
    .SetKernelFn(PD_KERNEL(GatherRowsGrad));

namespace {

// Scattered rows per step of the indexed products: gathered into a buffer (256 KiB at D = 512) that
// stays in L2 while MKL's products read it.
constexpr int64_t kIndexedRows = 128;
constexpr int kTile = static_cast<int>(kIndexedRows);

// MKL's packed copy of an operand that is the same in every full tile's product (the features),
// made once per op; null (every product then takes cblas_sgemm) where the BLAS cannot pack.
class PackedOperand {
 public:
  PackedOperand(const Blas& blas, int identifier, int m, int n, int k, const float* source, int ld) {
    if (blas.pack == nullptr || m <= 0 || n <= 0 || k <= 0) return;
    const size_t bytes = (blas.pack_get_size(identifier, m, n, k) + 63) / 64 * 64;
    data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
    PD_CHECK(data_ != nullptr, "cannot allocate ", bytes, " bytes for a packed operand");
    blas.pack(kRowMajor, identifier, kNoTrans, m, n, k, 1.0f, source, ld, data_.get());
  }
  const float* get() const { return data_.get(); }

 private:
  struct Free {
    void operator()(float* data) const { std::free(data); }
  };
  std::unique_ptr<float, Free> data_;
};

void CheckIndexedTable(const paddle::Tensor& table, const paddle::Tensor& index, int64_t dim) {
  PD_CHECK(table.is_cpu(), "table must be a CPU tensor");
  PD_CHECK(table.dtype() == paddle::DataType::FLOAT32 || table.dtype() == paddle::DataType::BFLOAT16,
           "table must be float32 or bfloat16");
  PD_CHECK(index.is_cpu() && index.dtype() == paddle::DataType::INT64, "index must be an int64 CPU tensor");
  PD_CHECK(table.shape().size() == 2 && table.shape()[1] == dim, "table must be [L, D] with the features' D = ", dim);
}

// The kept rows of a float32 or bfloat16 table as the float32 operand of a product: a tile of them
// at a time in an L2-sized buffer, bfloat16 rows widened and, with round_bfloat16, float32 rows
// rounded to bfloat16 values (the operand of a bfloat16 product computed in float32).
class IndexedRows {
 public:
  IndexedRows(const paddle::Tensor& table, const paddle::Tensor& index, bool round_bfloat16)
      : bfloat16_rows_(table.dtype() == paddle::DataType::BFLOAT16 ? table.data<bfloat16>() : nullptr),
        float32_rows_(bfloat16_rows_ == nullptr ? table.data<float>() : nullptr),
        index_(index.data<int64_t>()),
        count_(index.numel()),
        num_rows_(table.shape()[0]),
        dim_(table.shape()[1]),
        round_(round_bfloat16 && bfloat16_rows_ == nullptr) {}

  // buffer[r - r0] = row index[r] as the operand, for r in [r0, r0 + m) (the next rows prefetched);
  // with `inverse`, inverse[r] = 1 / max(|that row|, eps), taken while the row is in L1.
  void Tile(int64_t r0, int64_t m, float* buffer, float* inverse, float eps) const {
    for (int64_t r = r0; r < r0 + m; ++r) {
      float* row = buffer + (r - r0) * dim_;
      if (bfloat16_rows_ != nullptr) {
        const bfloat16* stored = IndexedRow(bfloat16_rows_, index_, r, count_, num_rows_, dim_);
#pragma omp simd
        for (int64_t d = 0; d < dim_; ++d) row[d] = Widen(stored[d]);
      } else if (round_) {
        const float* stored = IndexedRow(float32_rows_, index_, r, count_, num_rows_, dim_);
#pragma omp simd
        for (int64_t d = 0; d < dim_; ++d) row[d] = RoundToBfloat16(stored[d]);
      } else {
        CopyIndexedRow(float32_rows_, index_, r, count_, num_rows_, dim_, row);
      }
      if (inverse != nullptr) inverse[r] = ClippedInverseNorm(SquaredNorm(row, dim_), eps);
    }
  }

 private:
  const bfloat16* bfloat16_rows_;
  const float* float32_rows_;
  const int64_t* index_;
  int64_t count_, num_rows_, dim_;
  bool round_;
};

}  // namespace

// BlockLogits of the rows table[index] (float32 or bfloat16 table; IndexedRows) without a gathered
// copy of them: logits = features table[index]^T ([N, D] x [c, D]^T) and their inverse norms [c],
// kIndexedRows rows at a time.
std::vector<paddle::Tensor> IndexedLogits(const paddle::Tensor& features, const paddle::Tensor& table,
                                          const paddle::Tensor& index, float eps, bool round_bfloat16,
                                          const std::string& library) {
  CheckCpuFloat32(features, "features");
  PD_CHECK(features.shape().size() == 2, "features must be [N, D]");
  const int64_t n = features.shape()[0], dim = features.shape()[1], count = index.numel();
  CheckIndexedTable(table, index, dim);
  auto logits = paddle::empty({n, count}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto inverse = paddle::empty({count}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  const Blas blas = LoadBlas(library);
  std::vector<float> buffer(kIndexedRows * dim);
  const float* x = features.data<float>();
  float* out = logits.data<float>();
  const int rows = static_cast<int>(n), ld = static_cast<int>(dim), ldc = static_cast<int>(count);
  const PackedOperand packed(blas, kAMatrix, rows, kTile, ld, x, ld);  // x, [N, D]
  const IndexedRows rows_of_table(table, index, round_bfloat16);
  for (int64_t r0 = 0; r0 < count; r0 += kIndexedRows) {
    const int64_t m = std::min(kIndexedRows, count - r0);
    rows_of_table.Tile(r0, m, buffer.data(), inverse.data<float>(), eps);
    if (n == 0) continue;
    if (packed.get() != nullptr && m == kIndexedRows) {
      blas.compute(kRowMajor, kPacked, kTrans, rows, kTile, ld, packed.get(), ld, buffer.data(), ld, 0.0f,
                   out + r0, ldc);
    } else {
      blas.sgemm(kRowMajor, kNoTrans, kTrans, rows, static_cast<int>(m), ld, 1.0f, x, ld, buffer.data(), ld, 0.0f,
                 out + r0, ldc);
    }
  }
  return {logits, inverse};
}

std::vector<std::vector<int64_t>> IndexedLogitsShape(const std::vector<int64_t>& features,
                                                     const std::vector<int64_t>&, const std::vector<int64_t>& index) {
  return {{features[0], index.empty() ? 1 : index[0]}, {index.empty() ? 1 : index[0]}};
}

std::vector<paddle::DataType> IndexedLogitsDtype(const paddle::DataType& features, const paddle::DataType&,
                                                 const paddle::DataType&) {
  return {features, features};
}

PD_BUILD_OP(pfc_indexed_logits)
    .Inputs({"Features", "Table", "Index"})
    .Outputs({"Logits", "InvNorm"})
    .Attrs({"eps: float", "round_bfloat16: bool", "library: std::string"})
    .SetKernelFn(PD_KERNEL(IndexedLogits))
    .SetInferShapeFn(PD_INFER_SHAPE(IndexedLogitsShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(IndexedLogitsDtype));

// The two gradient products of a block whose rows are table[index] (float32 or bfloat16 table;
// IndexedRows): grad_features = dlogits table[index] ([N, c] x [c, D], float32) and grad_rows =
// dlogits^T features ([c, N] x [N, D]; float32, or with bfloat16_grad rounded to bfloat16 as
// Paddle's cast), kIndexedRows rows at a time (each read once into L2 for its product). Both by
// `library`'s cblas_sgemm, or the first by the dnnl_sgemm of a non-empty `feature_library`.
std::vector<paddle::Tensor> IndexedBackward(const paddle::Tensor& dlogits, const paddle::Tensor& features,
                                            const paddle::Tensor& table, const paddle::Tensor& index,
                                            bool round_bfloat16, bool bfloat16_grad, const std::string& library,
                                            const std::string& feature_library) {
  CheckCpuFloat32(dlogits, "dlogits");
  CheckCpuFloat32(features, "features");
  PD_CHECK(features.shape().size() == 2 && dlogits.shape().size() == 2, "features [N, D] and dlogits [N, c]");
  const int64_t n = features.shape()[0], dim = features.shape()[1], count = index.numel();
  PD_CHECK(dlogits.shape()[0] == n && dlogits.shape()[1] == count, "dlogits must be [N, c] = [", n, ", ", count, "]");
  CheckIndexedTable(table, index, dim);
  auto grad_features = paddle::empty({n, dim}, paddle::DataType::FLOAT32, paddle::CPUPlace());
  auto grad_rows = paddle::empty({count, dim}, bfloat16_grad ? paddle::DataType::BFLOAT16 : paddle::DataType::FLOAT32,
                                 paddle::CPUPlace());
  const Blas blas = LoadBlas(library);
  const DnnlSgemm feature_sgemm = LoadDnnlSgemm(feature_library);
  std::vector<float> buffer(kIndexedRows * dim);
  std::vector<float> float32_tile(bfloat16_grad ? kIndexedRows * dim : 0);  // a tile's rows before rounding
  const float* g = dlogits.data<float>();
  const float* x = features.data<float>();
  float* gx = grad_features.data<float>();
  const int rows = static_cast<int>(n), ld = static_cast<int>(dim), ldg = static_cast<int>(count);
  const PackedOperand packed(blas, kBMatrix, kTile, ld, rows, x, ld);  // x, [N, D]
  const IndexedRows rows_of_table(table, index, round_bfloat16);
  if (count == 0) std::fill(gx, gx + n * dim, 0.0f);
  for (int64_t r0 = 0; r0 < count; r0 += kIndexedRows) {
    const int64_t m = std::min(kIndexedRows, count - r0);
    float* gw = bfloat16_grad ? float32_tile.data() : grad_rows.data<float>() + r0 * dim;
    rows_of_table.Tile(r0, m, buffer.data(), nullptr, 0.0f);
    if (n == 0) {
      std::fill(gw, gw + m * dim, 0.0f);
    } else {
      const float beta = r0 == 0 ? 0.0f : 1.0f;
      if (feature_sgemm != nullptr) {
        const int status = feature_sgemm('N', 'N', n, dim, m, 1.0f, g + r0, count, buffer.data(), dim, beta, gx, dim);
        PD_CHECK(status == 0, "dnnl_sgemm failed (status ", status, ")");
      } else {
        blas.sgemm(kRowMajor, kNoTrans, kNoTrans, rows, ld, static_cast<int>(m), 1.0f, g + r0, ldg, buffer.data(), ld,
                   beta, gx, ld);
      }
      if (packed.get() != nullptr && m == kIndexedRows) {
        blas.compute(kRowMajor, kTrans, kPacked, kTile, ld, rows, g + r0, ldg, packed.get(), ld, 0.0f, gw, ld);
      } else {
        blas.sgemm(kRowMajor, kTrans, kNoTrans, static_cast<int>(m), ld, rows, 1.0f, g + r0, ldg, x, ld, 0.0f, gw,
                   ld);
      }
    }
    if (bfloat16_grad) {
      bfloat16* out = grad_rows.data<bfloat16>() + r0 * dim;
#pragma omp simd
      for (int64_t i = 0; i < m * dim; ++i) Store(gw[i], out + i);
    }
  }
  return {grad_features, grad_rows};
}

std::vector<std::vector<int64_t>> IndexedBackwardShape(const std::vector<int64_t>&, const std::vector<int64_t>& features,
                                                       const std::vector<int64_t>& table,
                                                       const std::vector<int64_t>& index) {
  return {features, {index.empty() ? 1 : index[0], table[1]}};
}

std::vector<paddle::DataType> IndexedBackwardDtype(const paddle::DataType& dlogits, const paddle::DataType&,
                                                   const paddle::DataType&, const paddle::DataType&, bool,
                                                   bool bfloat16_grad) {
  return {dlogits, bfloat16_grad ? paddle::DataType::BFLOAT16 : dlogits};
}

PD_BUILD_OP(pfc_indexed_backward)
    .Inputs({"DLogits", "Features", "Table", "Index"})
    .Outputs({"GradFeatures", "GradRows"})
    .Attrs({"round_bfloat16: bool", "bfloat16_grad: bool", "library: std::string", "feature_library: std::string"})
    .SetKernelFn(PD_KERNEL(IndexedBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(IndexedBackwardShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(IndexedBackwardDtype));

// Rows [start, end) of a [L, D] table as a tensor sharing its memory (no copy): a block of
// consecutive centers. Writing the table's rows changes the block's values.
std::vector<paddle::Tensor> RowRange(const paddle::Tensor& table, int64_t start, int64_t end) {
  PD_CHECK(table.is_cpu() && table.shape().size() == 2, "table must be a [L, D] CPU tensor");
  PD_CHECK(0 <= start && start < end && end <= table.shape()[0], "rows [", start, ", ", end,
           ") outside the table's ", table.shape()[0], " rows");
  return {table.slice(start, end)};
}

std::vector<std::vector<int64_t>> RowRangeShape(const std::vector<int64_t>& table, int64_t start, int64_t end) {
  return {{end - start, table[1]}};
}

std::vector<paddle::DataType> RowRangeDtype(const paddle::DataType& table) { return {table}; }

PD_BUILD_OP(pfc_row_range)
    .Inputs({"Table"})
    .Outputs({"Rows"})
    .Attrs({"start: int64_t", "end: int64_t"})
    .SetKernelFn(PD_KERNEL(RowRange))
    .SetInferShapeFn(PD_INFER_SHAPE(RowRangeShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(RowRangeDtype));

// Never part of a training program (see GatherRowsGrad).
std::vector<paddle::Tensor> RowRangeGrad(const paddle::Tensor&, const paddle::Tensor&, int64_t, int64_t) {
  PD_THROW("pfc_row_range has no gradient for its table (a sharded center table is updated sparsely)");
}

PD_BUILD_GRAD_OP(pfc_row_range)
    .Inputs({"Table", paddle::Grad("Rows")})
    .Outputs({paddle::Grad("Table")})
    .Attrs({"start: int64_t", "end: int64_t"})
    .SetKernelFn(PD_KERNEL(RowRangeGrad));

namespace {

// splitmix64 (Steele, Lea and Flood 2014): one add and a multiply-xorshift chain per 64-bit number.
inline uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

// The kept centers of a shard, ascending: every positive (each label in [0, num_local); negative
// labels belong to other shards) and, while they are fewer than num_sample, negatives chosen by
// selection sampling (Knuth's Algorithm S): walking the negatives in order, each is kept with
// probability wanted / remaining, which keeps a uniformly random subset of exactly
// num_sample - positives of them. The draw below `remaining` is the high half of a 64 x 64-bit
// product (Lemire): its bias is below remaining / 2^64. seed: int64 [2] from Paddle's generator.
std::vector<paddle::Tensor> SampleShard(const paddle::Tensor& local_label, const paddle::Tensor& seed,
                                        int64_t num_local, int64_t num_sample) {
  PD_CHECK(local_label.is_cpu() && local_label.dtype() == paddle::DataType::INT64, "labels must be CPU int64");
  PD_CHECK(seed.is_cpu() && seed.dtype() == paddle::DataType::INT64 && seed.numel() == 2, "seed must be CPU int64 [2]");
  PD_CHECK(0 < num_sample && num_sample <= num_local, "num_sample ", num_sample, " outside [1, num_local ", num_local, "]");
  std::vector<uint8_t> positive(num_local, 0);
  const int64_t* label = local_label.data<int64_t>();
  int64_t num_positive = 0;
  for (int64_t i = 0; i < local_label.numel(); ++i) {
    const int64_t c = label[i];
    if (c < 0) continue;
    PD_CHECK(c < num_local, "label ", c, " (sample ", i, ") outside the shard's ", num_local, " classes");
    num_positive += positive[c] == 0;
    positive[c] = 1;
  }
  int64_t wanted = std::max<int64_t>(0, num_sample - num_positive);
  auto out = paddle::empty({num_positive + wanted}, paddle::DataType::INT64, paddle::CPUPlace());
  int64_t* kept = out.data<int64_t>();
  const int64_t* s = seed.data<int64_t>();
  uint64_t state = (static_cast<uint64_t>(s[0]) << 32) ^ static_cast<uint64_t>(s[1]);
  uint64_t remaining = static_cast<uint64_t>(num_local - num_positive);
  int64_t k = 0;
  for (int64_t j = 0; j < num_local; ++j) {
    if (positive[j]) {
      kept[k++] = j;
      continue;
    }
    if (wanted > 0) {
      const auto draw = static_cast<uint64_t>((static_cast<unsigned __int128>(SplitMix64(state)) * remaining) >> 64);
      if (draw < static_cast<uint64_t>(wanted)) {
        kept[k++] = j;
        --wanted;
      }
    }
    --remaining;
  }
  return {out};
}

std::vector<std::vector<int64_t>> SampleShardShape(const std::vector<int64_t>&, const std::vector<int64_t>&,
                                                   int64_t, int64_t) {
  return {{-1}};
}

std::vector<paddle::DataType> SampleShardDtype(const paddle::DataType&, const paddle::DataType&) {
  return {paddle::DataType::INT64};
}

PD_BUILD_OP(pfc_sample_shard)
    .Inputs({"LocalLabel", "Seed"})
    .Outputs({"SampledIndex"})
    .Attrs({"num_local: int64_t", "num_sample: int64_t"})
    .SetKernelFn(PD_KERNEL(SampleShard))
    .SetInferShapeFn(PD_INFER_SHAPE(SampleShardShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(SampleShardDtype));
