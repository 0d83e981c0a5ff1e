#include "kernels/onednn_bf16.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "kernels/onednn_common.h"

namespace sam3::kernels {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;
using dims = memory::dims;

// Native bf16 instructions: AVX512-BF16 ("avx512_core_bf16") or AMX. Without them oneDNN 2.6
// emulates bf16 on AVX-512 (slower than float) or has only reference kernels.
bool native(const std::string& impl) { return impl.find("bf16") != std::string::npos || impl.find("amx") != std::string::npos; }

dnnl::matmul::primitive_desc bf16_product(const memory::desc& src, const memory::desc& weights, const memory::desc& dst) {
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, dst), user_scratchpad(), cpu_engine());
}

Primitive checked(const dnnl::matmul::primitive_desc& pd) {
  const std::string impl = pd.impl_info_str();
  if (!native(impl)) throw std::runtime_error("oneDNN has no native bf16 kernel here (" + impl + ")");
  return make_primitive<dnnl::matmul>(pd);
}

Primitive reorder(const memory::desc& from, const memory::desc& to, float scale = 1.0f) {
  dnnl::primitive_attr attr = user_scratchpad();
  if (scale != 1.0f) attr.set_output_scales(0, {scale});
  return make_primitive<dnnl::reorder>(dnnl::reorder::primitive_desc(cpu_engine(), from, cpu_engine(), to, attr));
}

// The implementation oneDNN picks for a SAM3-sized bf16 product here (empty if not native).
const std::string& probe() {
  static const std::string impl = [] {
    try {
      const auto pd = bf16_product(memory::desc({1024, 1024}, dt::bf16, tag::ab), memory::desc({1024, 1024}, dt::bf16, tag::any),
                                   memory::desc({1024, 1024}, dt::f32, tag::ab));
      return native(pd.impl_info_str()) ? std::string(pd.impl_info_str()) : std::string();
    } catch (const dnnl::error&) {
      return std::string();
    }
  }();
  return impl;
}

memory::desc plain(const dims& d, dt type) { return memory::desc(d, type, d.size() == 2 ? tag::ab : tag::abc); }

template <class T>
memory wrap(const memory::desc& d, const T* data) {
  return memory(d, cpu_engine(), const_cast<T*>(data));
}

// Buffers oneDNN fills before it reads them (a vector would zero them first).
template <class T>
std::unique_ptr<T[]> buffer(std::int64_t n) {
  return std::unique_ptr<T[]>(new T[static_cast<size_t>(std::max<std::int64_t>(n, 1))]);
}

// Primitives by shape, made on first use (creating one costs about a millisecond).
class Primitives {
 public:
  template <class Make>
  const Primitive& get(const std::vector<std::int64_t>& key, Make make) {
    std::lock_guard lock(mutex_);
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, make()).first;
    return it->second;  // std::map: stays valid while others are added
  }

 private:
  std::mutex mutex_;
  std::map<std::vector<std::int64_t>, Primitive> cache_;
};

template <class Kernel>
OrtStatusPtr guarded(const char* op, Kernel& kernel, OrtKernelContext* context) {
  try {
    kernel.compute(Ort::KernelContext(context));
    return nullptr;
  } catch (const std::exception& e) {
    return Ort::Status((std::string("oneDNN bf16 ") + op + ": " + e.what()).c_str(), ORT_RUNTIME_EXCEPTION).release();
  }
}

std::vector<std::int64_t> shape_of(const Ort::ConstValue& v) { return v.GetTensorTypeAndShapeInfo().GetShape(); }

// y[b] = softmax(scale * q[b] k[b]^T) v[b], q [B, S, D], k [B, L, D], v [B, L, Dv].
// Work items are (batch, block of query rows), spread over OpenMP's threads; each runs its
// primitives on one thread, so a block's scores stay in that core's cache (materialising
// scores for all batches at once made the kernel memory-bound: 2.7x slower than ONNX
// Runtime's float flash attention on SAM3's shapes).
class AttentionKernel {
 public:
  AttentionKernel(const OrtKernelInfo* info, int threads) : threads_(threads) {
    const Ort::ConstKernelInfo kernel_info(info);
    if (kernel_info.GetAttribute<std::int64_t>("num_heads") != 1) throw std::runtime_error("only one head is supported");
    try {
      scale_ = kernel_info.GetAttribute<float>("scale");
    } catch (const Ort::Exception&) {
      scale_ = 0.0f;  // absent: 1 / sqrt(D)
    }
  }
  OrtStatusPtr ComputeV2(OrtKernelContext* context) { return guarded("MultiHeadAttention", *this, context); }

  void compute(const Ort::KernelContext& ctx) {
    const Ort::ConstValue q = ctx.GetInput(0), k = ctx.GetInput(1), v = ctx.GetInput(2);
    const auto qs = shape_of(q), ks = shape_of(k), vs = shape_of(v);
    if (qs.size() != 3 || ks.size() != 3 || vs.size() != 3) throw std::runtime_error("Q, K and V must be [batch, tokens, width]");
    const std::int64_t B = qs[0], S = qs[1], D = qs[2], L = ks[1], Dv = vs[2];
    if (ks[0] != B || vs[0] != B || ks[2] != D || vs[1] != L) throw std::runtime_error("Q, K and V do not fit each other");
    Ort::UnownedValue y = ctx.GetOutput(0, {B, S, Dv});
    auto* out = y.GetTensorMutableData<float>();
    if (B * S * Dv == 0) return;
    if (L == 0 || D == 0) throw std::runtime_error("no keys");
    use_threads(threads_);
    const float scale = scale_ != 0.0f ? scale_ : 1.0f / std::sqrt(static_cast<float>(D));

    // K^T [B, D, L] and V in bf16, once per call (on all threads).
    auto kt = buffer<std::uint16_t>(B * D * L), vb = buffer<std::uint16_t>(B * L * Dv);
    execute(primitives_.get({0, B, L, D},
                            [&] {
                              return reorder(plain({B, L, D}, dt::f32), memory::desc({B, L, D}, dt::bf16, tag::acb));
                            }),
            {{DNNL_ARG_FROM, wrap(plain({B, L, D}, dt::f32), k.GetTensorData<float>())},
             {DNNL_ARG_TO, wrap(memory::desc({B, L, D}, dt::bf16, tag::acb), kt.get())}});
    execute(primitives_.get({1, B, L, Dv},
                            [&] {
                              return reorder(plain({B, L, Dv}, dt::f32), plain({B, L, Dv}, dt::bf16));
                            }),
            {{DNNL_ARG_FROM, wrap(plain({B, L, Dv}, dt::f32), v.GetTensorData<float>())},
             {DNNL_ARG_TO, wrap(plain({B, L, Dv}, dt::bf16), vb.get())}});

    const std::int64_t rows = std::min(S, std::max<std::int64_t>(16, kScoreElements / L));
    const std::int64_t blocks = (S + rows - 1) / rows;
    // The primitives of both block heights, made before the threads share them.
    const std::int64_t last = S - (blocks - 1) * rows;
    for (const std::int64_t r : {rows, last}) block_primitives(r, D, L, Dv, scale);
    const float* q_data = q.GetTensorData<float>();
    std::string failure;
#if SAM3_HAVE_OPENMP
#pragma omp parallel
#endif
    {
      auto qb = buffer<std::uint16_t>(rows * D), p = buffer<std::uint16_t>(rows * L);
      auto scores = buffer<float>(rows * L);
#if SAM3_HAVE_OPENMP
#pragma omp for schedule(dynamic)
#endif
      for (std::int64_t item = 0; item < B * blocks; ++item) {
        const std::int64_t b = item / blocks, s0 = (item % blocks) * rows, r = std::min(rows, S - s0);
        try {
          const Block& pr = block_primitives(r, D, L, Dv, scale);
          const memory qb_mem = wrap(plain({r, D}, dt::bf16), qb.get()), score_mem = wrap(plain({r, L}, dt::f32), scores.get());
          const memory p_mem = wrap(plain({r, L}, dt::bf16), p.get());
          execute(*pr.q, {{DNNL_ARG_FROM, wrap(plain({r, D}, dt::f32), q_data + (b * S + s0) * D)}, {DNNL_ARG_TO, qb_mem}});
          execute(
              *pr.scores,
              {{DNNL_ARG_SRC, qb_mem}, {DNNL_ARG_WEIGHTS, wrap(plain({D, L}, dt::bf16), kt.get() + b * D * L)}, {DNNL_ARG_DST, score_mem}});
          execute(*pr.softmax, {{DNNL_ARG_SRC, score_mem}, {DNNL_ARG_DST, score_mem}});
          execute(*pr.p, {{DNNL_ARG_FROM, score_mem}, {DNNL_ARG_TO, p_mem}});
          execute(*pr.out, {{DNNL_ARG_SRC, p_mem},
                            {DNNL_ARG_WEIGHTS, wrap(plain({L, Dv}, dt::bf16), vb.get() + b * L * Dv)},
                            {DNNL_ARG_DST, wrap(plain({r, Dv}, dt::f32), out + (b * S + s0) * Dv)}});
        } catch (const std::exception& e) {
#if SAM3_HAVE_OPENMP
#pragma omp critical
#endif
          failure = e.what();
        }
      }
    }
    if (!failure.empty()) throw std::runtime_error(failure);
  }

 private:
  // One block of r query rows: Q to bf16 (scaled), the scores, their softmax, P to bf16, P V.
  struct Block {
    const Primitive *q, *scores, *softmax, *p, *out;
  };
  const Block& block_primitives(std::int64_t r, std::int64_t D, std::int64_t L, std::int64_t Dv, float scale) {
    std::lock_guard lock(blocks_mutex_);
    const std::vector<std::int64_t> key = {r, D, L, Dv};
    auto it = blocks_.find(key);
    if (it != blocks_.end()) return it->second;
    Block b;
    b.q = &primitives_.get({2, r, D}, [&] { return reorder(plain({r, D}, dt::f32), plain({r, D}, dt::bf16), scale); });
    b.scores = &primitives_.get({3, r, D, L}, [&] {
      return checked(bf16_product(plain({r, D}, dt::bf16), plain({D, L}, dt::bf16), plain({r, L}, dt::f32)));
    });
    b.softmax = &primitives_.get({4, r, L}, [&] {
      return make_primitive<dnnl::softmax_forward>(dnnl::softmax_forward::primitive_desc(
          dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, plain({r, L}, dt::f32), 1), user_scratchpad(), cpu_engine()));
    });
    b.p = &primitives_.get({5, r, L}, [&] { return reorder(plain({r, L}, dt::f32), plain({r, L}, dt::bf16)); });
    b.out = &primitives_.get({6, r, L, Dv}, [&] {
      return checked(bf16_product(plain({r, L}, dt::bf16), plain({L, Dv}, dt::bf16), plain({r, Dv}, dt::f32)));
    });
    return blocks_.emplace(key, b).first->second;
  }

  int threads_ = 0;
  float scale_ = 0.0f;
  Primitives primitives_;
  std::mutex blocks_mutex_;
  std::map<std::vector<std::int64_t>, Block> blocks_;
};

// y[..., N] = x[..., K] w[K, N] with w constant.
class MatMulKernel {
 public:
  MatMulKernel(const OrtKernelInfo* info, int threads) : threads_(threads) {
    const Ort::ConstKernelInfo kernel_info(info);
    int constant = 0;
    const Ort::ConstValue w = kernel_info.GetTensorConstantInput(1, &constant);
    if (!constant) throw std::runtime_error("the weights are not a constant");
    const auto shape = shape_of(w);
    if (shape.size() != 2) throw std::runtime_error("the weights are not a matrix");
    k_ = shape[0], n_ = shape[1];
    // The weights in bf16, in oneDNN's blocked layout (it does not depend on the rows).
    const auto pd = bf16_product(plain({1024, k_}, dt::bf16), memory::desc({k_, n_}, dt::bf16, tag::any), plain({1024, n_}, dt::f32));
    checked(pd);
    weights_ = memory(pd.weights_desc(), cpu_engine());
    const memory from = wrap(plain({k_, n_}, dt::f32), w.GetTensorData<float>());
    execute(reorder(from.get_desc(), weights_.get_desc()), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, weights_}});
  }
  OrtStatusPtr ComputeV2(OrtKernelContext* context) { return guarded("MatMul", *this, context); }

  void compute(const Ort::KernelContext& ctx) {
    const Ort::ConstValue x = ctx.GetInput(0);
    std::vector<std::int64_t> shape = shape_of(x);
    if (shape.empty() || shape.back() != k_) throw std::runtime_error("the input's last dimension is not the weights' rows");
    std::int64_t m = 1;
    for (size_t i = 0; i + 1 < shape.size(); ++i) m *= shape[i];
    shape.back() = n_;
    Ort::UnownedValue y = ctx.GetOutput(0, shape);
    if (m == 0 || n_ == 0) return;
    auto* out = y.GetTensorMutableData<float>();
    if (k_ == 0) {
      std::memset(out, 0, static_cast<size_t>(m * n_) * sizeof(float));
      return;
    }
    use_threads(threads_);
    auto xb = buffer<std::uint16_t>(m * k_);
    const memory x_mem = wrap(plain({m, k_}, dt::bf16), xb.get());
    execute(primitives_.get({0, m},
                            [&] {
                              return reorder(plain({m, k_}, dt::f32), plain({m, k_}, dt::bf16));
                            }),
            {{DNNL_ARG_FROM, wrap(plain({m, k_}, dt::f32), x.GetTensorData<float>())}, {DNNL_ARG_TO, x_mem}});
    execute(primitives_.get({1, m},
                            [&] {
                              return checked(bf16_product(plain({m, k_}, dt::bf16), weights_.get_desc(), plain({m, n_}, dt::f32)));
                            }),
            {{DNNL_ARG_SRC, x_mem}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, wrap(plain({m, n_}, dt::f32), out)}});
  }

 private:
  int threads_ = 0;
  std::int64_t k_ = 0, n_ = 0;
  memory weights_;
  Primitives primitives_;
};

template <class Kernel, size_t Inputs>
struct FloatOp : Ort::CustomOpBase<FloatOp<Kernel, Inputs>, Kernel, true> {
  FloatOp(const char* name, int threads) : name_(name), threads_(threads) {}

  OrtStatusPtr CreateKernelV2(const OrtApi&, const OrtKernelInfo* info, void** kernel) const {
    try {
      *kernel = new Kernel(info, threads_);
      return nullptr;
    } catch (const std::exception& e) {
      return Ort::Status((std::string("oneDNN bf16 ") + name_ + ": " + e.what()).c_str(), ORT_FAIL).release();
    }
  }
  const char* GetName() const { return name_; }
  size_t GetInputTypeCount() const { return Inputs; }
  ONNXTensorElementDataType GetInputType(size_t) const { return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT; }
  size_t GetOutputTypeCount() const { return 1; }
  ONNXTensorElementDataType GetOutputType(size_t) const { return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT; }

 private:
  const char* name_;
  int threads_;
};

using AttentionOp = FloatOp<AttentionKernel, 3>;
using MatMulOp = FloatOp<MatMulKernel, 2>;

}  // namespace

bool onednn_bf16_available() { return !probe().empty(); }

std::string bf16_kernels_description() {
  if (!probe().empty()) return onednn_version() + " (" + probe() + ")";
  return "none (" + onednn_version() + " has no native bf16 kernel for this CPU: no AVX512-BF16 or AMX)";
}

void register_onednn_bf16_ops(Ort::SessionOptions& options, int threads) {
  if (!onednn_bf16_available()) return;
  add_op_domain(options, kOneDnnBf16Domain, threads, [](int t) {
    return std::vector<std::shared_ptr<OrtCustomOp>>{std::make_shared<AttentionOp>("MultiHeadAttention", t),
                                                     std::make_shared<MatMulOp>("MatMul", t)};
  });
}

}  // namespace sam3::kernels
