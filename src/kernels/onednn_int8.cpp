#include "kernels/onednn_int8.h"
#include "kernels/onednn_common.h"

#include <oneapi/dnnl/dnnl.hpp>
#if SAM3_HAVE_OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace sam3::kernels {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

dnnl::engine& engine() { return cpu_engine(); }

dnnl::matmul::primitive_desc product_desc(memory::dim m, const memory::desc& weights, memory::dim n) {
  const memory::dim k = weights.dims()[0];
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // one scratchpad per call: concurrent runs are safe
  return dnnl::matmul::primitive_desc(
      dnnl::matmul::desc(memory::desc({m, k}, dt::u8, tag::ab), weights, memory::desc({m, n}, dt::s32, tag::ab)), attr, engine());
}

// VNNI and AMX sum u8 x s8 pairs straight into int32; other paths saturate 16-bit sums.
bool exact(const dnnl::matmul::primitive_desc& pd) {
  const std::string impl = pd.impl_info_str();
  return impl.find("vnni") != std::string::npos || impl.find("amx") != std::string::npos;
}

// The implementation oneDNN picks for a SAM3-sized product here (empty if not an exact one).
const std::string& probe() {
  static const std::string impl = [] {
    try {
      const auto pd = product_desc(1024, memory::desc({1024, 1024}, dt::s8, tag::any), 1024);
      return exact(pd) ? std::string(pd.impl_info_str()) : std::string();
    } catch (const dnnl::error&) {
      return std::string();
    }
  }();
  return impl;
}

// y[m, n] = sum_k (a[m, k] - a_zp) * (b[k, n] - b_zp[n]) in int32, as ONNX's MatMulInteger.
// oneDNN computes sum_k a * b; the zero points follow from sums over a's rows and b's columns:
//   y = ab - a_zp * colsum(b)[n] - b_zp[n] * rowsum(a)[m] + k * a_zp * b_zp[n]
// (modulo 2^32, like the int32 accumulation itself).
class MatMulIntegerKernel {
 public:
  MatMulIntegerKernel(const OrtKernelInfo* info, int threads) : threads_(threads) {
    const Ort::ConstKernelInfo kernel_info(info);
    int constant = 0;
    const Ort::ConstValue b = kernel_info.GetTensorConstantInput(1, &constant);
    if (!constant) throw std::runtime_error("the weights are not a constant");
    const auto shape = b.GetTensorTypeAndShapeInfo().GetShape();
    if (shape.size() != 2) throw std::runtime_error("the weights are not a matrix");
    k_ = shape[0], n_ = shape[1];
    const auto* w = b.GetTensorData<std::int8_t>();
    col_sum_.assign(static_cast<size_t>(n_), 0);
    for (std::int64_t r = 0; r < k_; ++r) {
      for (std::int64_t c = 0; c < n_; ++c) col_sum_[static_cast<size_t>(c)] += static_cast<std::uint32_t>(w[r * n_ + c]);
    }
    b_zp_.assign(static_cast<size_t>(n_), 0);
    if (kernel_info.GetInputCount() > 3) {
      const Ort::ConstValue zp = kernel_info.GetTensorConstantInput(3, &constant);
      if (zp) {
        if (!constant) throw std::runtime_error("the weights' zero point is not a constant");
        const size_t count = zp.GetTensorTypeAndShapeInfo().GetElementCount();
        if (count != 1 && count != static_cast<size_t>(n_)) throw std::runtime_error("the weights' zero point has the wrong size");
        const auto* z = zp.GetTensorData<std::int8_t>();
        for (size_t c = 0; c < b_zp_.size(); ++c) b_zp_[c] = static_cast<std::uint32_t>(z[count == 1 ? 0 : c]);
      }
    }
    for (auto z : b_zp_) has_b_zp_ = has_b_zp_ || z != 0;
    // The weights in oneDNN's blocked layout, once (the layout does not depend on the rows).
    const auto pd = product_desc(1024, memory::desc({k_, n_}, dt::s8, tag::any), n_);
    if (!exact(pd)) throw std::runtime_error(std::string("oneDNN has no exact int8 kernel here (") + pd.impl_info_str() + ")");
    weights_ = memory(pd.weights_desc(), engine());
    memory plain(memory::desc({k_, n_}, dt::s8, tag::ab), engine(), const_cast<std::int8_t*>(w));
    dnnl::stream s(engine());
    dnnl::reorder(plain, weights_).execute(s, plain, weights_);
    s.wait();
  }

  OrtStatusPtr ComputeV2(OrtKernelContext* context) {
    try {
      compute(Ort::KernelContext(context));
      return nullptr;
    } catch (const std::exception& e) {
      return Ort::Status((std::string("oneDNN MatMulInteger: ") + e.what()).c_str(), ORT_RUNTIME_EXCEPTION).release();
    }
  }

 private:
  struct Product {
    dnnl::matmul primitive;
    size_t scratchpad_bytes = 0;
  };

  const Product& product_for(std::int64_t m) {
    std::lock_guard lock(mutex_);
    auto it = products_.find(m);
    if (it != products_.end()) return it->second;
    const auto pd = product_desc(m, weights_.get_desc(), n_);
    if (!exact(pd)) throw std::runtime_error(std::string("oneDNN has no exact int8 kernel here (") + pd.impl_info_str() + ")");
    return products_.emplace(m, Product{dnnl::matmul(pd), pd.scratchpad_desc().get_size()}).first->second;
  }

  void compute(const Ort::KernelContext& ctx) {
    const Ort::ConstValue a = ctx.GetInput(0);
    std::vector<std::int64_t> shape = a.GetTensorTypeAndShapeInfo().GetShape();
    if (shape.empty() || shape.back() != k_) throw std::runtime_error("the input's last dimension is not the weights' rows");
    std::int64_t m = 1;
    for (size_t i = 0; i + 1 < shape.size(); ++i) m *= shape[i];
    std::uint32_t a_zp = 0;
    if (ctx.GetInputCount() > 2) {
      const Ort::ConstValue zp = ctx.GetInput(2);
      if (zp) {
        if (zp.GetTensorTypeAndShapeInfo().GetElementCount() != 1) throw std::runtime_error("the input's zero point is not a scalar");
        a_zp = *zp.GetTensorData<std::uint8_t>();
      }
    }
    shape.back() = n_;
    Ort::UnownedValue y = ctx.GetOutput(0, shape);
    if (m == 0 || n_ == 0) return;
    const auto* a_data = a.GetTensorData<std::uint8_t>();
    auto* y_data = y.GetTensorMutableData<std::int32_t>();
    if (k_ == 0) {
      std::memset(y_data, 0, static_cast<size_t>(m * n_) * sizeof(std::int32_t));
      return;
    }
#if SAM3_HAVE_OPENMP
    if (threads_ > 0) omp_set_num_threads(threads_);  // this thread's parallel regions
#endif
    const Product& p = product_for(m);
    memory src(memory::desc({m, k_}, dt::u8, tag::ab), engine(), const_cast<std::uint8_t*>(a_data));
    memory dst(memory::desc({m, n_}, dt::s32, tag::ab), engine(), y_data);
    // Uninitialised (a vector would zero megabytes per call); oneDNN writes before it reads.
    const std::unique_ptr<std::uint8_t[]> scratch(new std::uint8_t[std::max<size_t>(p.scratchpad_bytes, 1)]);
    memory scratchpad(memory::desc({static_cast<memory::dim>(p.scratchpad_bytes)}, dt::u8, tag::a), engine(), scratch.get());
    dnnl::stream s(engine());
    p.primitive.execute(s, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad}});
    s.wait();
    apply_zero_points(a_data, y_data, m, a_zp);
  }

  void apply_zero_points(const std::uint8_t* a, std::int32_t* y, std::int64_t m, std::uint32_t a_zp) const {
    if (a_zp == 0 && !has_b_zp_) return;
    // Per column: the terms that do not depend on the row. Unsigned: wraps like the int32 sums.
    std::vector<std::uint32_t> column(static_cast<size_t>(n_));
    for (size_t c = 0; c < column.size(); ++c) {
      column[c] = static_cast<std::uint32_t>(k_) * a_zp * b_zp_[c] - a_zp * col_sum_[c];
    }
#if SAM3_HAVE_OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (std::int64_t r = 0; r < m; ++r) {
      std::uint32_t row_sum = 0;
      if (has_b_zp_) {
        for (std::int64_t i = 0; i < k_; ++i) row_sum += a[r * k_ + i];
      }
      auto* out = reinterpret_cast<std::uint32_t*>(y + r * n_);
      for (std::int64_t c = 0; c < n_; ++c) out[c] += column[static_cast<size_t>(c)] - b_zp_[static_cast<size_t>(c)] * row_sum;
    }
  }

  int threads_ = 0;
  std::int64_t k_ = 0, n_ = 0;
  std::vector<std::uint32_t> col_sum_, b_zp_;
  bool has_b_zp_ = false;
  memory weights_;
  std::mutex mutex_;
  std::map<std::int64_t, Product> products_;  // one primitive per row count
};

struct MatMulIntegerOp : Ort::CustomOpBase<MatMulIntegerOp, MatMulIntegerKernel, true> {
  explicit MatMulIntegerOp(int threads) : threads_(threads) {}

  OrtStatusPtr CreateKernelV2(const OrtApi&, const OrtKernelInfo* info, void** kernel) const {
    try {
      *kernel = new MatMulIntegerKernel(info, threads_);
      return nullptr;
    } catch (const std::exception& e) {
      return Ort::Status((std::string("oneDNN MatMulInteger: ") + e.what()).c_str(), ORT_FAIL).release();
    }
  }
  const char* GetName() const { return "MatMulInteger"; }
  size_t GetInputTypeCount() const { return 4; }
  ONNXTensorElementDataType GetInputType(size_t i) const {
    return i == 0 || i == 2 ? ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8 : ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8;
  }
  OrtCustomOpInputOutputCharacteristic GetInputCharacteristic(size_t i) const {
    return i < 2 ? INPUT_OUTPUT_REQUIRED : INPUT_OUTPUT_OPTIONAL;
  }
  size_t GetOutputTypeCount() const { return 1; }
  ONNXTensorElementDataType GetOutputType(size_t) const { return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32; }

 private:
  int threads_;
};

}  // namespace

bool onednn_int8_available() { return !probe().empty(); }

std::string int8_kernels_description() {
  const std::string onednn = onednn_version();
  if (!probe().empty()) return onednn + " (" + probe() + ")";
  return "ONNX Runtime (" + onednn + " has no exact int8 kernel for this CPU: no VNNI or AMX)";
}

void register_onednn_ops(Ort::SessionOptions& options, int threads) {
  if (!onednn_int8_available()) return;
  add_op_domain(options, kOneDnnDomain, threads,
                [](int t) { return std::vector<std::shared_ptr<OrtCustomOp>>{std::make_shared<MatMulIntegerOp>(t)}; });
}

}  // namespace sam3::kernels
