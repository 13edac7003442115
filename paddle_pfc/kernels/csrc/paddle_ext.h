// The parts of "paddle/extension.h" these kernels use: paddle::Tensor and its creation functions,
// PD_BUILD_OP / PD_KERNEL and PD_CHECK / PD_THROW (redefined below). The whole header also brings
// PIR's pass and pattern headers and pybind11 (under C++17, which Paddle's build uses), ~12 s more
// compile time per extension for nothing used here.
#pragma once

#include <cstdio>

#include "paddle/common/exception.h"
#include "paddle/fluid/platform/init_phi.h"
#include "paddle/phi/api/all.h"

// As "paddle/extension.h" does: phi's operants set up when the extension is loaded.
static paddle::InitPhi g_init_phi;

// Paddle 3.3's static executor re-raises a custom op's exception as a bare std::exception, its
// message lost (docs/paddle-notes.md); so the kernels' checks also print their message, with the
// source line, to stderr (a rank's worker log under paddle.distributed.launch) before throwing.
#undef PD_CHECK
#undef PD_THROW
#define PFC_FAIL(DEFAULT_MESSAGE, ...)                                                              \
  do {                                                                                              \
    const ::common::PD_Exception pfc_error_(::common::ErrorMessage(__VA_ARGS__).to_string(),       \
                                            __FILE__, __LINE__, DEFAULT_MESSAGE);                   \
    std::fprintf(stderr, "paddle_pfc kernel error: %s\n", pfc_error_.what());                      \
    std::fflush(stderr);                                                                            \
    throw pfc_error_;                                                                               \
  } while (0)
#define PD_CHECK(COND, ...)                                                                         \
  do {                                                                                              \
    if (PD_UNLIKELY(!(COND))) PFC_FAIL("Expected " #COND ", but it is not satisfied.", __VA_ARGS__); \
  } while (0)
#define PD_THROW(...) PFC_FAIL("An error occurred.", __VA_ARGS__)
