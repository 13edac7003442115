// oneDNN ops: 2-D convolution (dense, grouped or depthwise; NCHW, float32 tensors with float32 or
// bfloat16 products, or with bfloat16 products bfloat16 activations in and / or out; no bias, no
// dilation, symmetric zero padding) with its backward, and a matrix
// product (pfc_matmul, float32 or bfloat16 tensors, each read as a matrix [leading axes, last axis],
// bfloat16 or float32 products; the head's bfloat16 road and a ViT's bfloat16 Linears,
// since Paddle 3.3.1's CPU build registers no bfloat16 matmul kernel), through oneDNN: the
// library Paddle's CPU wheel already loads (paddle/libs/libdnnl.so.3, oneDNN 3.6.2, OpenMP
// threading through libgomp). Paddle 3.3's own CPU conv2d /
// conv2d_grad (im2col + GEMM) were ~67 % of mobilefacenet's and ~97 % of iresnet50's training
// step (docs/paddle-notes.md). Built on first use by paddle_pfc/kernels/onednn_ops.py, which states
// the contract; the oneDNN headers of that exact release are vendored beside this file
// (third_party/onednn/, Apache-2.0), because the wheel ships only forwarding stubs of them.
//
// With channels_last the activations are NHWC tensors (x [N, H, W, C], out [N, OH, OW, O]) and
// oneDNN computes on them as they are (its nxc kernels: no activation reorder at all; mobilefacenet
// keeps its trunk in NHWC, docs/performance.md); pfc_to_nhwc / pfc_to_nchw convert a tensor between
// the two layouts (oneDNN's reorder, each the other's gradient). Otherwise oneDNN chooses the
// layouts it computes in (format_tag::any: blocked nChw16c / OIhw16i16o on
// AVX-512); Paddle's plain NCHW / OIHW tensors are reordered into and out of them. A 1x1
// convolution of stride 1 (a product per image) keeps its activations in NCHW: oneDNN's GEMM
// convolution on them skips the two activation reorders (mobilefacenet b32 training step, one
// rank, 2026-11-25, AMD EPYC [AVX2 AVX-512F AVX512_BF16]: 1.56 -> 1.46 s float32, 1.18 -> 1.13 s
// bfloat16). Primitives and
// their descriptors are cached per shape. Paddle's PIR executor runs independent CPU ops on
// several threads at once (tests/test_onednn_ops.py::test_conv_concurrent_branches), so the cache
// and the lazy building of primitives are under one lock; a built entry is read-only, and all
// per-run state (the blocked copies in a per-thread pool shared by all shapes, Pool below; the
// stream) belongs to the calling thread, so convolutions run concurrently. Convolutions use the
// direct algorithm (no Winograd). Math: strict float32 (fpmath_mode::strict), or with bf16 set,
// bfloat16 operands (rounded to nearest even by the reorders) accumulated in float32, results in
// float32 (or rounded to a bfloat16 output / d x).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <omp.h>

#include "oneapi/dnnl/dnnl.hpp"
#include "paddle_ext.h"

static_assert(DNNL_VERSION_MAJOR == 3, "built against oneDNN 3 headers");

namespace {

using dnnl::memory;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

// oneDNN's threads (its OpenMP is libgomp's): 0 = libgomp's default (OMP_NUM_THREADS, else every
// core); set once from Python (pfc_onednn_set_threads) to the thread count of Paddle's own CPU
// math, which Paddle keeps at 1 unless OMP_NUM_THREADS says otherwise. OpenMP's thread count is
// per calling thread and Paddle's executor may run ops on its own threads, so each kernel applies
// it on entry.
int g_threads = 0;

void ApplyThreads() {
  if (g_threads > 0 && omp_get_max_threads() != g_threads) omp_set_num_threads(g_threads);
}

// n, c, h, w, o, kh, kw, sh, sw, ph, pw, types (the kBf16* bits below), groups
using Key = std::array<int64_t, 13>;
// bfloat16 products (else float32); a bfloat16 x and d x (else float32); a bfloat16 output and
// d output (else float32); NHWC activations (else NCHW). Tensors in bfloat16 need bfloat16 products.
constexpr int64_t kBf16Products = 1, kBf16Input = 2, kBf16Output = 4, kChannelsLast = 8;

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& Stream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

dnnl::primitive_attr StrictAttr() {
  dnnl::primitive_attr attr;
  attr.set_fpmath_mode(dnnl::fpmath_mode::strict);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// Blocked copies of the operands and the scratchpads live in a few buffers per thread, reused by
// every shape: a thread runs one primitive at a time, and each buffer is used only within one
// primitive's run (reorder in, execute, reorder out). So the memory is that of the largest
// convolution, not the sum over all shapes (iresnet50 at batch 16: 1.35 GB with a set per shape).
// Slots 0-2: the primitive's three operands; slot 3: its scratchpad; slot 4: d y converted once
// for both gradient primitives of a convolution (ConvBackward), the one buffer used across two runs.
class Pool {
 public:
  ~Pool() {
    for (auto& buffer : buffers_) std::free(buffer.data);
  }
  void* Get(int slot, size_t bytes) {
    Buffer& buffer = buffers_[slot];
    if (buffer.size < bytes) {
      std::free(buffer.data);
      buffer.size = (bytes + 63) / 64 * 64;
      buffer.data = std::aligned_alloc(64, buffer.size);
      if (buffer.data == nullptr) {
        buffer.size = 0;
        throw std::bad_alloc();
      }
    }
    return buffer.data;
  }
  int64_t Bytes() const {
    int64_t total = 0;
    for (const auto& buffer : buffers_) total += static_cast<int64_t>(buffer.size);
    return total;
  }

 private:
  struct Buffer {
    void* data = nullptr;
    size_t size = 0;
  };
  std::array<Buffer, 5> buffers_;
};

Pool& ThreadPool() {
  thread_local Pool pool;
  return pool;
}

constexpr int kScratchSlot = 3, kSharedDiffDstSlot = 4;

// A tensor in Paddle's plain layout (user memory) and, when oneDNN wants another layout, the
// reorder between the two; the blocked copy lives in the calling thread's pool slot `slot`.
// Read-only once built (shared by the threads that run this shape).
struct Operand {
  memory::desc plain, chosen;
  bool reordered = false;  // chosen != plain
  dnnl::reorder to_chosen, to_plain;
  bool input = true;
  int slot = 0;

  void Init(const memory::desc& plain_md, const memory::desc& chosen_md, bool is_input, int pool_slot) {
    plain = plain_md;
    chosen = chosen_md;
    input = is_input;
    slot = pool_slot;
    reordered = chosen != plain;
    if (reordered) {
      if (input) {
        to_chosen = dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), plain, Engine(), chosen));
      } else {
        to_plain = dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), chosen, Engine(), plain));
      }
    }
  }

  // The memory the primitive reads (input) or writes (output) for Paddle buffer `data`;
  // an input is reordered into its blocked copy first.
  memory Bind(void* data) const { return BindIn(data, slot); }
  memory BindIn(void* data, int pool_slot) const {
    memory user(plain, Engine(), data);
    if (!reordered) return user;
    memory blocked(chosen, Engine(), ThreadPool().Get(pool_slot, chosen.get_size()));
    if (input) to_chosen.execute(Stream(), user, blocked);
    return blocked;
  }

  // After the primitive: an output computed in `computed` (Bind's memory) goes back to `data`.
  void Finish(const memory& computed, void* data) const {
    if (input || !reordered) return;
    memory user(plain, Engine(), data), src = computed;  // a handle: reorder takes non-const ones
    to_plain.execute(Stream(), src, user);
  }
};

struct Scratch {
  memory::desc md;
  void Init(const memory::desc& scratch_md) { md = scratch_md; }
  // Adds the scratchpad argument (in the pool's scratch slot) when the primitive needs one.
  void AddTo(std::unordered_map<int, memory>& args) const {
    if (md.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, memory(md, Engine(), ThreadPool().Get(kScratchSlot, md.get_size())));
  }
};

// S [O, W] (+)= d y^T [O, rows] P [rows, W] for a chunk of `rows` patches P of width W.
struct PatchProduct {
  dnnl::matmul op;
  Scratch scratch;
};

struct Entry {
  bool plain = false;  // activations stay in Paddle's layout (NHWC; NCHW for 1x1 convolutions: a GEMM per image)
  tag act_tag = tag::nchw;  // Paddle's layout of x and the output: nchw, or nhwc with channels_last
  std::vector<int64_t> y_shape;  // the output tensor's shape in that layout
  dt operand = dt::f32;  // the products' operand type: f32, or bf16 (accumulated and written in f32)
  dt x_type = dt::f32;   // x's (and d x's) type: f32, or bf16 with bf16 operands
  dt y_type = dt::f32;   // the output's (and its gradient's) type: f32, or bf16 with bf16 operands
  memory::dims strides, padding;
  memory::desc x_md, w_md, y_md;
  std::unique_ptr<dnnl::convolution_forward::primitive_desc> fwd_pd;

  bool has_fwd = false;
  dnnl::convolution_forward fwd;
  Operand fwd_x, fwd_w, fwd_y;
  Scratch fwd_scratch;

  bool has_bwd_data = false;
  dnnl::convolution_backward_data bwd_data;
  Operand bd_dy, bd_w, bd_dx;
  Scratch bd_scratch;
  bool has_bwd_weights = false;
  // d w: oneDNN's convolution backward-weights primitive, or for a float32 1x1 stride-1
  // convolution on NHWC tensors (w_as_product) the product d w [O, C] = d y [N*H*W, O]^T
  // x [N*H*W, C] on oneDNN's matmul (brgemm): in mobilefacenet's float32 step it took 135 ms
  // where jit_1x1 took 177 (a 128-channel 28x28 layer 4.7 against 8.0 ms; AMD EPYC Zen 5,
  // 2026-11-25). In bfloat16 the product was slower in the step than jit_bf16_1x1 (3.5 against
  // 2.3 ms for that layer), so bfloat16 keeps the convolution primitive.
  bool w_as_product = false;
  // Below AVX-512, d w of a dense float32 NHWC convolution with a larger kernel (or a stride) as
  // products over chunks of x's patches (w_from_patches, WeightsGradientFromPatches below).
  bool w_from_patches = false;
  int64_t patch_rows = 0;  // output positions a chunk (the last may have fewer)
  PatchProduct first_patches, more_patches, last_patches;  // the first chunk writes, the others add
  dnnl::reorder sums_to_oihw;  // the [O, kh, kw, C] sums into Paddle's OIHW d w
  dnnl::primitive bwd_weights;
  int bw_dy_arg = DNNL_ARG_DIFF_DST, bw_x_arg = DNNL_ARG_SRC, bw_dw_arg = DNNL_ARG_DIFF_WEIGHTS;
  Operand bw_x, bw_dy, bw_dw;
  Scratch bw_scratch;
};

// True where oneDNN's effective ISA lacks AVX-512 (avx512_core).
bool BelowAvx512() {
  static const bool below = (static_cast<unsigned>(dnnl::get_effective_cpu_isa()) & dnnl_cpu_isa_avx512_core) !=
                            dnnl_cpu_isa_avx512_core;
  return below;
}

// An activation's descriptor: Paddle's layout when the entry keeps activations plain, else oneDNN's choice.
memory::desc Act(const Entry& e, const memory::desc& md, dt type) {
  return memory::desc(md.get_dims(), type, e.plain ? e.act_tag : tag::any);
}

std::map<Key, std::unique_ptr<Entry>>& Cache() {
  static std::map<Key, std::unique_ptr<Entry>> cache;
  return cache;
}

Entry& Lookup(const Key& k) {
  auto& cache = Cache();
  auto found = cache.find(k);
  if (found != cache.end()) return *found->second;
  auto entry = std::make_unique<Entry>();
  const int64_t n = k[0], c = k[1], h = k[2], w = k[3], o = k[4], kh = k[5], kw = k[6];
  const int64_t sh = k[7], sw = k[8], ph = k[9], pw = k[10];
  const dt operand = k[11] & kBf16Products ? dt::bf16 : dt::f32;
  const dt x_type = k[11] & kBf16Input ? dt::bf16 : dt::f32;
  const dt y_type = k[11] & kBf16Output ? dt::bf16 : dt::f32;
  const int64_t groups = k[12];
  const int64_t oh = (h + 2 * ph - kh) / sh + 1, ow = (w + 2 * pw - kw) / sw + 1;
  entry->operand = operand;
  entry->x_type = x_type;
  entry->y_type = y_type;
  entry->strides = {sh, sw};
  entry->padding = {ph, pw};
  entry->act_tag = k[11] & kChannelsLast ? tag::nhwc : tag::nchw;
  entry->x_md = memory::desc({n, c, h, w}, x_type, entry->act_tag);
  // grouped weights [O, C / g, kh, kw] are oneDNN's goihw [g, O / g, C / g, kh, kw], the same bytes
  const memory::dims w_dims = groups == 1 ? memory::dims{o, c, kh, kw} : memory::dims{groups, o / groups, c / groups, kh, kw};
  entry->w_md = memory::desc(w_dims, dt::f32, groups == 1 ? tag::oihw : tag::goihw);
  entry->y_md = memory::desc({n, o, oh, ow}, y_type, entry->act_tag);
  entry->y_shape = entry->act_tag == tag::nhwc ? std::vector<int64_t>{n, oh, ow, o} : std::vector<int64_t>{n, o, oh, ow};
  const bool pointwise = kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0 && groups == 1;
  entry->plain = entry->act_tag == tag::nhwc || pointwise;
  entry->w_as_product = entry->act_tag == tag::nhwc && pointwise && operand == dt::f32;
  entry->w_from_patches = entry->act_tag == tag::nhwc && !pointwise && groups == 1 && operand == dt::f32 &&
                          x_type == dt::f32 && y_type == dt::f32 && BelowAvx512();
  const memory::desc x_any = Act(*entry, entry->x_md, operand), w_any(w_dims, operand, tag::any),
      y_any = Act(*entry, entry->y_md, y_type);
  entry->fwd_pd = std::make_unique<dnnl::convolution_forward::primitive_desc>(
      Engine(), dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, x_any, w_any, y_any,
      entry->strides, entry->padding, entry->padding, StrictAttr());
  Entry& ref = *entry;
  cache.emplace(k, std::move(entry));
  return ref;
}

void BuildForward(Entry& e) {
  if (e.has_fwd) return;
  const auto& pd = *e.fwd_pd;
  e.fwd = dnnl::convolution_forward(pd);
  e.fwd_x.Init(e.x_md, pd.src_desc(), true, 0);
  e.fwd_w.Init(e.w_md, pd.weights_desc(), true, 1);
  e.fwd_y.Init(e.y_md, pd.dst_desc(), false, 2);
  e.fwd_scratch.Init(pd.scratchpad_desc());
  e.has_fwd = true;
}

// Backward primitives: operands in e.operand, results in f32 (d w) and x's type (d x); each built on first use
// (d x is never built for a layer whose input needs no gradient, e.g. a stem on images).
memory::desc Any(const memory::desc& md, dt type) { return memory::desc(md.get_dims(), type, tag::any); }

void BuildBackwardData(Entry& e) {
  if (e.has_bwd_data) return;
  dnnl::convolution_backward_data::primitive_desc pd(Engine(), dnnl::algorithm::convolution_direct,
                                                     Act(e, e.x_md, e.x_type), Any(e.w_md, e.operand),
                                                     Act(e, e.y_md, e.operand), e.strides, e.padding, e.padding,
                                                     *e.fwd_pd, StrictAttr());
  e.bwd_data = dnnl::convolution_backward_data(pd);
  e.bd_dy.Init(e.y_md, pd.diff_dst_desc(), true, 0);
  e.bd_w.Init(e.w_md, pd.weights_desc(), true, 1);
  e.bd_dx.Init(e.x_md, pd.diff_src_desc(), false, 2);
  e.bd_scratch.Init(pd.scratchpad_desc());
  e.has_bwd_data = true;
}

// d w of a 1x1 stride-1 NHWC convolution as a product: A = d y as [O, K] (its NHWC bytes read
// transposed), B = x as [K, C], C = d w as [O, C] (OIHW of a 1x1 kernel), K = N * H * W.
void BuildBackwardWeightsProduct(Entry& e) {
  const memory::dims y = e.y_md.get_dims(), x = e.x_md.get_dims();
  const int64_t k = x[0] * x[2] * x[3], o = y[1], c = x[1];
  const memory::desc a({o, k}, e.operand, tag::ba), b({k, c}, e.operand, tag::ab), d({o, c}, dt::f32, tag::ab);
  const dnnl::matmul::primitive_desc pd(Engine(), a, b, d, StrictAttr());
  e.bwd_weights = dnnl::matmul(pd);
  e.bw_dy_arg = DNNL_ARG_SRC, e.bw_x_arg = DNNL_ARG_WEIGHTS, e.bw_dw_arg = DNNL_ARG_DST;
  e.bw_dy.Init(memory::desc({o, k}, e.y_type, tag::ba), pd.src_desc(), true, 1);
  e.bw_x.Init(memory::desc({k, c}, e.x_type, tag::ab), pd.weights_desc(), true, 0);
  e.bw_dw.Init(d, pd.dst_desc(), false, 2);
  e.bw_scratch.Init(pd.scratchpad_desc());
}

void BuildBackwardWeightsConvolution(Entry& e) {
  dnnl::convolution_backward_weights::primitive_desc pd(Engine(), dnnl::algorithm::convolution_direct,
                                                        Act(e, e.x_md, e.operand), Any(e.w_md, dt::f32),
                                                        Act(e, e.y_md, e.operand), e.strides, e.padding, e.padding,
                                                        *e.fwd_pd, StrictAttr());
  e.bwd_weights = dnnl::convolution_backward_weights(pd);
  e.bw_x.Init(e.x_md, pd.src_desc(), true, 0);
  e.bw_dy.Init(e.y_md, pd.diff_dst_desc(), true, 1);
  e.bw_dw.Init(e.w_md, pd.diff_weights_desc(), false, 2);
  e.bw_scratch.Init(pd.scratchpad_desc());
}

// d w of a dense float32 convolution on NHWC tensors, below AVX-512, other than a 1x1 stride-1
// one: oneDNN's jit:avx2 kernel ran at about half its forward rate, on NHWC or its own blocked
// layouts (iresnet50 b16, one rank, AMD EPYC Zen 3 [AVX2], 2026-11-26: d w 6.35 s a step, 4.55 s
// on blocked copies, 3.36 s of products here; docs/paddle-notes.md). Instead,
// for chunks of output positions k = (n, oh, ow), the patches P [rows, kh*kw*C] (the x values each
// position reads, zero in the padding) and S [O, kh*kw*C] += d y[k, :]^T P on oneDNN's matmul;
// then S (OHWI) reordered into d w (OIHW). A chunk's patches take ~kPatchChunkBytes.
constexpr int64_t kPatchChunkBytes = 16 << 20;

PatchProduct MakePatchProduct(int64_t o, int64_t rows, int64_t width, bool add) {
  dnnl::primitive_attr attr = StrictAttr();
  if (add) {
    dnnl::post_ops sum;
    sum.append_sum(1.0f);
    attr.set_post_ops(sum);
  }
  const dnnl::matmul::primitive_desc pd(Engine(), memory::desc({o, rows}, dt::f32, tag::ba),
                                        memory::desc({rows, width}, dt::f32, tag::ab),
                                        memory::desc({o, width}, dt::f32, tag::ab), attr);
  PatchProduct product;
  product.op = dnnl::matmul(pd);
  product.scratch.Init(pd.scratchpad_desc());
  return product;
}

// (output positions N*OH*OW, output channels O, patch width C*kh*kw) of a convolution entry
std::array<int64_t, 3> PatchShape(const Entry& e) {
  const memory::dims y = e.y_md.get_dims(), w = e.w_md.get_dims();
  return {y[0] * y[2] * y[3], w[0], w[1] * w[2] * w[3]};
}

void BuildBackwardWeightsFromPatches(Entry& e) {
  const auto [positions, o, width] = PatchShape(e);
  e.patch_rows = std::min(positions, std::max<int64_t>(64, kPatchChunkBytes / (width * 4)));
  e.first_patches = MakePatchProduct(o, e.patch_rows, width, false);
  if (positions > e.patch_rows) e.more_patches = MakePatchProduct(o, e.patch_rows, width, true);
  if (positions % e.patch_rows) e.last_patches = MakePatchProduct(o, positions % e.patch_rows, width, true);
  const memory::dims w = e.w_md.get_dims();
  e.sums_to_oihw = dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), memory::desc(w, dt::f32, tag::ohwi), Engine(),
                                                               memory::desc(w, dt::f32, tag::oihw)));
}

// Rows [first, first + count) of x's patches: row k = (n, oh, ow), columns (i, j, c).
void FillPatches(const Entry& e, const float* x, int64_t first, int64_t count, float* patches) {
  const memory::dims xd = e.x_md.get_dims(), yd = e.y_md.get_dims(), wd = e.w_md.get_dims();
  const int64_t c = xd[1], h = xd[2], w = xd[3], oh = yd[2], ow = yd[3], kh = wd[2], kw = wd[3];
  const int64_t sh = e.strides[0], sw = e.strides[1], ph = e.padding[0], pw = e.padding[1];
  for (int64_t r = 0; r < count; ++r) {
    const int64_t k = first + r, n = k / (oh * ow), row = k % (oh * ow) / ow, col = k % ow;
    float* out = patches + r * kh * kw * c;
    for (int64_t i = 0; i < kh; ++i) {
      const int64_t ih = row * sh - ph + i;
      for (int64_t j = 0; j < kw; ++j, out += c) {
        const int64_t iw = col * sw - pw + j;
        if (ih < 0 || ih >= h || iw < 0 || iw >= w) {
          std::memset(out, 0, c * sizeof(float));
        } else {
          std::memcpy(out, x + ((n * h + ih) * w + iw) * c, c * sizeof(float));
        }
      }
    }
  }
}

void WeightsGradientFromPatches(const Entry& e, const float* x, const float* dy, float* dw) {
  const auto [positions, o, width] = PatchShape(e);
  const memory::dims w = e.w_md.get_dims();
  float* patches = static_cast<float*>(ThreadPool().Get(0, e.patch_rows * width * sizeof(float)));
  float* sums = static_cast<float*>(ThreadPool().Get(2, o * width * sizeof(float)));
  for (int64_t first = 0; first < positions; first += e.patch_rows) {
    const int64_t count = std::min(e.patch_rows, positions - first);
    FillPatches(e, x, first, count, patches);
    const PatchProduct& product = first == 0 ? e.first_patches : count == e.patch_rows ? e.more_patches : e.last_patches;
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, memory({{o, count}, dt::f32, tag::ba}, Engine(), const_cast<float*>(dy + first * o))},
        {DNNL_ARG_WEIGHTS, memory({{count, width}, dt::f32, tag::ab}, Engine(), patches)},
        {DNNL_ARG_DST, memory({{o, width}, dt::f32, tag::ab}, Engine(), sums)}};
    product.scratch.AddTo(args);
    product.op.execute(Stream(), args);
  }
  memory from(memory::desc(w, dt::f32, tag::ohwi), Engine(), sums), to(memory::desc(w, dt::f32, tag::oihw), Engine(), dw);
  e.sums_to_oihw.execute(Stream(), from, to);
}

void BuildBackwardWeights(Entry& e) {
  if (e.has_bwd_weights) return;
  if (e.w_from_patches) {
    BuildBackwardWeightsFromPatches(e);
  } else if (e.w_as_product) {
    BuildBackwardWeightsProduct(e);
  } else {
    BuildBackwardWeightsConvolution(e);
  }
  e.has_bwd_weights = true;
}

enum Part { kForward = 1, kBackwardData = 2, kBackwardWeights = 4 };

// The lock of the primitive caches (convolutions and products).
std::mutex& CacheLock() {
  static std::mutex lock;
  return lock;
}

// The cached entry of shape `k` with the primitives `parts` built: the one place that writes the
// cache, under its lock; the entry returned is read-only (std::map never moves its nodes).
const Entry& Prepared(const Key& k, int parts) {
  std::lock_guard<std::mutex> guard(CacheLock());
  Entry& e = Lookup(k);
  if (parts & kForward) BuildForward(e);
  if (parts & kBackwardData) BuildBackwardData(e);
  if (parts & kBackwardWeights) BuildBackwardWeights(e);
  return e;
}

// x's (n, c, h, w) in its layout
std::array<int64_t, 4> Nchw(const std::vector<int64_t>& s, bool channels_last) {
  return channels_last ? std::array<int64_t, 4>{s[0], s[3], s[1], s[2]} : std::array<int64_t, 4>{s[0], s[1], s[2], s[3]};
}

Key CheckedKey(const paddle::Tensor& x, const paddle::Tensor& w, int stride_h, int stride_w, int pad_h,
               int pad_w, bool bf16, int groups, bool bf16_out, bool channels_last) {
  PD_CHECK(x.is_cpu() && w.is_cpu(), "pfc_conv2d runs on CPU tensors");
  const bool bf16_x = x.dtype() == paddle::DataType::BFLOAT16;
  PD_CHECK((x.dtype() == paddle::DataType::FLOAT32 || (bf16 && bf16_x)) && w.dtype() == paddle::DataType::FLOAT32,
           "pfc_conv2d takes a float32 weight and a float32 x (bfloat16 x with bf16 products)");
  PD_CHECK(bf16 || !bf16_out, "pfc_conv2d: a bfloat16 output needs bf16 products");
  PD_CHECK(x.shape().size() == 4 && w.shape().size() == 4,
           "pfc_conv2d: x must be [N, C, H, W] ([N, H, W, C] with channels_last), weight [O, C, kh, kw]");
  const auto s = Nchw(x.shape(), channels_last);
  const auto& f = w.shape();
  PD_CHECK(groups >= 1 && s[1] % groups == 0 && f[0] % groups == 0 && f[1] * groups == s[1],
           "pfc_conv2d: weight must be [O, C / groups, kh, kw] for x's C, with groups dividing C and O");
  PD_CHECK(stride_h >= 1 && stride_w >= 1 && pad_h >= 0 && pad_w >= 0, "pfc_conv2d: bad stride or padding");
  PD_CHECK(s[2] + 2 * pad_h >= f[2] && s[3] + 2 * pad_w >= f[3], "pfc_conv2d: kernel larger than the padded input");
  const int64_t types = (bf16 ? kBf16Products : 0) | (bf16_x ? kBf16Input : 0) | (bf16_out ? kBf16Output : 0) |
                        (channels_last ? kChannelsLast : 0);
  return {s[0], s[1], s[2], s[3], f[0], f[2], f[3], stride_h, stride_w, pad_h, pad_w, types, groups};
}

// Execute with input a_arg already bound (`a_memory`, e.g. a converted copy shared by two runs).
void ExecuteBound(const dnnl::primitive& p, const Scratch& scratch, int a_arg, const memory& a_memory, int b_arg,
                  const Operand& b, const void* b_data, int c_arg, const Operand& c, void* c_data) {
  const memory out = c.Bind(c_data);
  std::unordered_map<int, memory> args{{a_arg, a_memory}, {b_arg, b.Bind(const_cast<void*>(b_data))}, {c_arg, out}};
  scratch.AddTo(args);
  p.execute(Stream(), args);
  c.Finish(out, c_data);
}

// One run of primitive `p` on Paddle buffers: inputs `a` and `b` (oneDNN arguments a_arg, b_arg)
// reordered in from a_data / b_data, the output `c` (c_arg) computed and reordered back to c_data.
void Execute(const dnnl::primitive& p, const Scratch& scratch, int a_arg, const Operand& a, const void* a_data,
             int b_arg, const Operand& b, const void* b_data, int c_arg, const Operand& c, void* c_data) {
  ExecuteBound(p, scratch, a_arg, a.Bind(const_cast<void*>(a_data)), b_arg, b, b_data, c_arg, c, c_data);
}

// A product op(a) [m, k] x op(b) [k, n] -> [m, n], op = transpose or not: plain row-major
// operands (read transposed in place through their strides), float32 or (with bf16 products)
// bfloat16 as they are stored, reordered into the layout and type oneDNN chooses (float32 ones
// to bfloat16 with bf16 set: rounded to nearest even); the float32 sums written as float32 or,
// with a bfloat16 output, rounded to nearest even.
struct MatmulEntry {
  dnnl::matmul primitive;
  Operand a, b, c;
  Scratch scratch;
};

// m, k, n, transpose_a, transpose_b, bf16 products, bfloat16 a, bfloat16 b, bfloat16 output
using MatmulKey = std::array<int64_t, 9>;

const MatmulEntry& PreparedMatmul(const MatmulKey& key) {
  std::lock_guard<std::mutex> guard(CacheLock());
  static std::map<MatmulKey, std::unique_ptr<MatmulEntry>> cache;
  std::unique_ptr<MatmulEntry>& slot = cache[key];
  if (!slot) {
    const int64_t m = key[0], k = key[1], n = key[2];
    const dt operand = key[5] ? dt::bf16 : dt::f32;
    const memory::desc a_plain({m, k}, key[6] ? dt::bf16 : dt::f32, key[3] ? tag::ba : tag::ab);
    const memory::desc b_plain({k, n}, key[7] ? dt::bf16 : dt::f32, key[4] ? tag::ba : tag::ab);
    const memory::desc c_plain({m, n}, key[8] ? dt::bf16 : dt::f32, tag::ab);
    const dnnl::matmul::primitive_desc pd(Engine(), memory::desc({m, k}, operand, tag::any),
                                          memory::desc({k, n}, operand, tag::any), c_plain, StrictAttr());
    auto entry = std::make_unique<MatmulEntry>();
    entry->primitive = dnnl::matmul(pd);
    entry->a.Init(a_plain, pd.src_desc(), true, 0);
    entry->b.Init(b_plain, pd.weights_desc(), true, 1);
    entry->c.Init(c_plain, pd.dst_desc(), false, 2);
    entry->scratch.Init(pd.scratchpad_desc());
    slot = std::move(entry);
  }
  return *slot;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void pfc_onednn_set_threads(int threads) {
  g_threads = threads > 0 ? threads : 0;
}

extern "C" __attribute__((visibility("default"))) int pfc_onednn_threads() {
  ApplyThreads();
  return omp_get_max_threads();
}

// Bytes of the calling thread's pool (its blocked copies and scratchpads).
extern "C" __attribute__((visibility("default"))) int64_t pfc_onednn_pool_bytes() { return ThreadPool().Bytes(); }

std::vector<paddle::Tensor> ConvForward(const paddle::Tensor& x, const paddle::Tensor& w, int stride_h,
                                        int stride_w, int pad_h, int pad_w, bool bf16, int groups, bool,
                                        bool bf16_out, bool channels_last) {
  ApplyThreads();
  const Entry& e = Prepared(CheckedKey(x, w, stride_h, stride_w, pad_h, pad_w, bf16, groups, bf16_out, channels_last),
                            kForward);
  auto out = paddle::empty(e.y_shape, bf16_out ? paddle::DataType::BFLOAT16 : paddle::DataType::FLOAT32,
                           paddle::CPUPlace());
  void* y = out.data();
  Execute(e.fwd, e.fwd_scratch, DNNL_ARG_SRC, e.fwd_x, x.data(), DNNL_ARG_WEIGHTS, e.fwd_w, w.data<float>(),
          DNNL_ARG_DST, e.fwd_y, y);
  Stream().wait();
  return {out};
}

std::vector<paddle::Tensor> ConvBackward(const paddle::Tensor& x, const paddle::Tensor& w,
                                         const paddle::Tensor& grad_out, int stride_h, int stride_w, int pad_h,
                                         int pad_w, bool bf16, int groups, bool input_grad, bool bf16_out,
                                         bool channels_last) {
  ApplyThreads();
  const Entry& e = Prepared(CheckedKey(x, w, stride_h, stride_w, pad_h, pad_w, bf16, groups, bf16_out, channels_last),
                            (input_grad ? kBackwardData : 0) | kBackwardWeights);
  const auto grad_type = bf16_out ? paddle::DataType::BFLOAT16 : paddle::DataType::FLOAT32;
  PD_CHECK(grad_out.dtype() == grad_type && grad_out.shape() == e.y_shape,
           "pfc_conv2d_grad: grad_out must be shaped and typed like the output");
  auto grad_x = paddle::empty(x.shape(), x.dtype(), paddle::CPUPlace());
  auto grad_w = paddle::empty(w.shape(), paddle::DataType::FLOAT32, paddle::CPUPlace());
  const void* xp = x.data();
  const float* wp = w.data<float>();
  const void* dyp = grad_out.data();
  void* dx = grad_x.data();
  void* dw = grad_w.data<float>();
  // d y converted (layout or bfloat16) once when both primitives want the same copy of it
  const bool shared_dy = input_grad && e.bd_dy.reordered && e.bw_dy.chosen == e.bd_dy.chosen;
  memory dy_for_weights;  // bound after d x unless shared
  if (input_grad) {
    const memory dy = e.bd_dy.BindIn(const_cast<void*>(dyp), shared_dy ? kSharedDiffDstSlot : e.bd_dy.slot);
    ExecuteBound(e.bwd_data, e.bd_scratch, DNNL_ARG_DIFF_DST, dy, DNNL_ARG_WEIGHTS, e.bd_w, wp, DNNL_ARG_DIFF_SRC,
                 e.bd_dx, dx);
    if (shared_dy) dy_for_weights = dy;
  } else {  // the input needs no gradient: Paddle drops this output; zeros, never garbage
    std::memset(dx, 0, grad_x.numel() * (e.x_type == dt::bf16 ? 2 : 4));
  }
  if (e.w_from_patches) {
    WeightsGradientFromPatches(e, static_cast<const float*>(xp), static_cast<const float*>(dyp), static_cast<float*>(dw));
  } else {
    if (!shared_dy) dy_for_weights = e.bw_dy.Bind(const_cast<void*>(dyp));
    ExecuteBound(e.bwd_weights, e.bw_scratch, e.bw_dy_arg, dy_for_weights, e.bw_x_arg, e.bw_x, xp, e.bw_dw_arg,
                 e.bw_dw, dw);
  }
  Stream().wait();
  return {grad_x, grad_w};
}

std::vector<std::vector<int64_t>> ConvShape(const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                                            int stride_h, int stride_w, int pad_h, int pad_w, bool, int, bool, bool,
                                            bool channels_last) {
  auto out_size = [](int64_t in, int64_t k, int stride, int pad) {
    return in < 0 ? in : (in + 2 * pad - k) / stride + 1;
  };
  const auto s = Nchw(x, channels_last);
  const int64_t oh = out_size(s[2], w[2], stride_h, pad_h), ow = out_size(s[3], w[3], stride_w, pad_w);
  if (channels_last) return {{s[0], oh, ow, w[0]}};
  return {{s[0], w[0], oh, ow}};
}

std::vector<paddle::DataType> ConvDtype(const paddle::DataType&, const paddle::DataType&, int, int, int, int, bool, int,
                                        bool, bool bf16_out, bool) {
  return {bf16_out ? paddle::DataType::BFLOAT16 : paddle::DataType::FLOAT32};
}

std::vector<std::vector<int64_t>> ConvGradShape(const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                                                const std::vector<int64_t>&, int, int, int, int, bool, int, bool,
                                                bool, bool) {
  return {x, w};
}

std::vector<paddle::DataType> ConvGradDtype(const paddle::DataType& x, const paddle::DataType& w,
                                            const paddle::DataType&) {
  return {x, w};
}

bool IsBfloat16(const paddle::Tensor& t) { return t.dtype() == paddle::DataType::BFLOAT16; }

std::vector<paddle::Tensor> Matmul(const paddle::Tensor& a, const paddle::Tensor& b, bool transpose_a,
                                   bool transpose_b, bool bf16, bool bf16_out) {
  ApplyThreads();
  auto float32_or_bfloat16 = [](const paddle::Tensor& t) {
    return t.is_cpu() && (t.dtype() == paddle::DataType::FLOAT32 || t.dtype() == paddle::DataType::BFLOAT16);
  };
  PD_CHECK(float32_or_bfloat16(a) && float32_or_bfloat16(b), "pfc_matmul takes float32 or bfloat16 CPU tensors");
  PD_CHECK(bf16 || !(IsBfloat16(a) || IsBfloat16(b) || bf16_out),
           "pfc_matmul: bfloat16 operands or a bfloat16 output need bf16 products");
  PD_CHECK(a.shape().size() >= 2 && b.shape().size() >= 2, "pfc_matmul takes tensors of 2 or more axes");
  // each operand as a matrix: its leading axes one, rows of its last axis
  const int64_t a_rows = a.shape().back() ? a.numel() / a.shape().back() : 0, a_cols = a.shape().back();
  const int64_t b_rows = b.shape().back() ? b.numel() / b.shape().back() : 0, b_cols = b.shape().back();
  const int64_t m = transpose_a ? a_cols : a_rows, k = transpose_a ? a_rows : a_cols;
  const int64_t k_b = transpose_b ? b_cols : b_rows, n = transpose_b ? b_rows : b_cols;
  PD_CHECK(k == k_b, "pfc_matmul: inner dimensions differ (", k, " and ", k_b, ")");
  std::vector<int64_t> out_shape{m, n};
  if (!transpose_a) {  // a's leading axes kept
    out_shape = a.shape();
    out_shape.back() = n;
  }
  auto out = paddle::empty(out_shape, bf16_out ? paddle::DataType::BFLOAT16 : paddle::DataType::FLOAT32,
                           paddle::CPUPlace());
  if (m == 0 || n == 0) return {out};
  if (k == 0) {
    std::memset(out.data(), 0, m * n * (bf16_out ? 2 : 4));
    return {out};
  }
  const MatmulEntry& e = PreparedMatmul({m, k, n, transpose_a ? 1 : 0, transpose_b ? 1 : 0, bf16 ? 1 : 0,
                                         IsBfloat16(a) ? 1 : 0, IsBfloat16(b) ? 1 : 0, bf16_out ? 1 : 0});
  Execute(e.primitive, e.scratch, DNNL_ARG_SRC, e.a, a.data(), DNNL_ARG_WEIGHTS, e.b, b.data(), DNNL_ARG_DST, e.c,
          out.data());
  Stream().wait();
  return {out};
}

std::vector<std::vector<int64_t>> MatmulShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                              bool transpose_a, bool transpose_b, bool, bool) {
  int64_t b_rows = 1;  // -1 when unknown
  for (size_t i = 0; i + 1 < b.size(); ++i) b_rows = (b_rows < 0 || b[i] < 0) ? -1 : b_rows * b[i];
  const int64_t n = transpose_b ? b_rows : b.back();
  if (transpose_a) return {{a.back(), n}};
  std::vector<int64_t> out(a);
  out.back() = n;
  return {out};
}

std::vector<paddle::DataType> MatmulDtype(const paddle::DataType&, const paddle::DataType&, bool, bool, bool,
                                          bool bf16_out) {
  return {bf16_out ? paddle::DataType::BFLOAT16 : paddle::DataType::FLOAT32};
}

// An [n, c, h, w] tensor of `type` reordered between NCHW and NHWC (oneDNN's reorder: a blocked
// transpose at memory speed; Paddle 3.3's CPU transpose took 37 ms for mobilefacenet's
// [32, 128, 56, 56] float32 map), the reorder cached per shape.
paddle::Tensor Relayout(const paddle::Tensor& x, bool to_nhwc) {
  ApplyThreads();
  PD_CHECK(x.is_cpu() && (x.dtype() == paddle::DataType::FLOAT32 || x.dtype() == paddle::DataType::BFLOAT16),
           "pfc_to_nhwc / pfc_to_nchw take a float32 or bfloat16 CPU tensor");
  PD_CHECK(x.shape().size() == 4, "pfc_to_nhwc / pfc_to_nchw take a 4-D tensor");
  const auto s = Nchw(x.shape(), !to_nhwc);
  const dt type = x.dtype() == paddle::DataType::BFLOAT16 ? dt::bf16 : dt::f32;
  const memory::dims dims{s[0], s[1], s[2], s[3]};
  const tag from = to_nhwc ? tag::nchw : tag::nhwc, to = to_nhwc ? tag::nhwc : tag::nchw;
  auto out = paddle::empty(to_nhwc ? std::vector<int64_t>{s[0], s[2], s[3], s[1]} : std::vector<int64_t>{s[0], s[1], s[2], s[3]},
                           x.dtype(), paddle::CPUPlace());
  if (x.numel() == 0) return out;
  const memory::desc from_md(dims, type, from), to_md(dims, type, to);
  const dnnl::reorder* reorder;
  {
    std::lock_guard<std::mutex> guard(CacheLock());
    static std::map<std::array<int64_t, 6>, dnnl::reorder> cache;
    const std::array<int64_t, 6> key{s[0], s[1], s[2], s[3], type == dt::bf16, to_nhwc};
    auto found = cache.find(key);
    if (found == cache.end()) {
      found = cache.emplace(key, dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), from_md, Engine(), to_md))).first;
    }
    reorder = &found->second;
  }
  memory src(from_md, Engine(), const_cast<void*>(x.data())), dst(to_md, Engine(), out.data());
  reorder->execute(Stream(), src, dst);
  Stream().wait();
  return out;
}

std::vector<paddle::Tensor> ToNhwc(const paddle::Tensor& x) { return {Relayout(x, true)}; }
std::vector<paddle::Tensor> ToNchw(const paddle::Tensor& x) { return {Relayout(x, false)}; }

std::vector<std::vector<int64_t>> ToNhwcShape(const std::vector<int64_t>& x) { return {{x[0], x[2], x[3], x[1]}}; }
std::vector<std::vector<int64_t>> ToNchwShape(const std::vector<int64_t>& x) { return {{x[0], x[3], x[1], x[2]}}; }
std::vector<paddle::DataType> SameDtype(const paddle::DataType& x) { return {x}; }

PD_BUILD_OP(pfc_matmul)
    .Inputs({"A", "B"})
    .Outputs({"Out"})
    .Attrs({"transpose_a: bool", "transpose_b: bool", "bf16: bool", "bf16_out: bool"})
    .SetKernelFn(PD_KERNEL(Matmul))
    .SetInferShapeFn(PD_INFER_SHAPE(MatmulShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(MatmulDtype));

PD_BUILD_OP(pfc_conv2d)
    .Inputs({"X", "W"})
    .Outputs({"Out"})
    .Attrs({"stride_h: int", "stride_w: int", "pad_h: int", "pad_w: int", "bf16: bool", "groups: int", "input_grad: bool",
            "bf16_out: bool", "channels_last: bool"})
    .SetKernelFn(PD_KERNEL(ConvForward))
    .SetInferShapeFn(PD_INFER_SHAPE(ConvShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(ConvDtype));

PD_BUILD_GRAD_OP(pfc_conv2d)
    .Inputs({"X", "W", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X"), paddle::Grad("W")})
    .Attrs({"stride_h: int", "stride_w: int", "pad_h: int", "pad_w: int", "bf16: bool", "groups: int", "input_grad: bool",
            "bf16_out: bool", "channels_last: bool"})
    .SetKernelFn(PD_KERNEL(ConvBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(ConvGradShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(ConvGradDtype));

PD_BUILD_OP(pfc_to_nhwc)
    .Inputs({"X"})
    .Outputs({"Out"})
    .SetKernelFn(PD_KERNEL(ToNhwc))
    .SetInferShapeFn(PD_INFER_SHAPE(ToNhwcShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(SameDtype));

PD_BUILD_GRAD_OP(pfc_to_nhwc)
    .Inputs({paddle::Grad("Out")})
    .Outputs({paddle::Grad("X")})
    .SetKernelFn(PD_KERNEL(ToNchw))
    .SetInferShapeFn(PD_INFER_SHAPE(ToNchwShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(SameDtype));

PD_BUILD_OP(pfc_to_nchw)
    .Inputs({"X"})
    .Outputs({"Out"})
    .SetKernelFn(PD_KERNEL(ToNchw))
    .SetInferShapeFn(PD_INFER_SHAPE(ToNchwShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(SameDtype));

PD_BUILD_GRAD_OP(pfc_to_nchw)
    .Inputs({paddle::Grad("Out")})
    .Outputs({paddle::Grad("X")})
    .SetKernelFn(PD_KERNEL(ToNhwc))
    .SetInferShapeFn(PD_INFER_SHAPE(ToNhwcShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(SameDtype));
