// CPU kernels for backbone ops whose Paddle 3.3 CPU kernels are far below memory speed. Profiled on
// mobilefacenet at 112x112 (2026-11-23, AMD EPYC Zen 4): Paddle's prelu forward and backward took
// 33 % of a training step's CPU time, more than all its convolutions' forward. Built on first use
// by paddle_pfc/native_ops.py; the Python module states the contracts.
#include <cstdint>
#include <vector>

#include "paddle/extension.h"

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
