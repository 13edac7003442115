// The parts of "paddle/extension.h" these kernels use: paddle::Tensor and its creation functions,
// PD_BUILD_OP / PD_KERNEL and PD_CHECK. The whole header also brings PIR's pass and pattern
// headers and pybind11 (under C++17, which Paddle's build uses), ~12 s more compile time per
// extension for nothing used here.
#pragma once

#include "paddle/common/exception.h"
#include "paddle/fluid/platform/init_phi.h"
#include "paddle/phi/api/all.h"

// As "paddle/extension.h" does: phi's operants set up when the extension is loaded.
static paddle::InitPhi g_init_phi;
