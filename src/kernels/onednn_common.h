// What sam3's oneDNN kernels share: one CPU engine, primitives run with a scratchpad of their
// own per call (so concurrent runs of one session are safe), and OpenMP's team size.
#pragma once

#include <onnxruntime_cxx_api.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace sam3::kernels {

dnnl::engine& cpu_engine();
// "oneDNN 2.6.3"
std::string onednn_version();
// During the calling thread's next oneDNN calls, `threads` OpenMP threads (0: OpenMP's default).
void use_threads(int threads);

// A primitive with the size of the scratchpad it needs (primitive attributes must ask for
// scratchpad_mode::user).
struct Primitive {
  dnnl::primitive primitive;
  size_t scratchpad_bytes = 0;
};
template <class Op, class Desc>
Primitive make_primitive(const Desc& pd) {
  return {Op(pd), pd.scratchpad_desc().get_size()};
}
// Runs it and waits, with a scratchpad allocated for this call.
void execute(const Primitive& p, std::unordered_map<int, dnnl::memory> args);
// Attributes asking for a user scratchpad.
dnnl::primitive_attr user_scratchpad();

// Adds the custom-op domain `domain` to `options`, its ops made by make(threads) once per
// domain and thread count and kept for the whole process (sessions keep pointers to them).
void add_op_domain(Ort::SessionOptions& options, const char* domain, int threads,
                   const std::function<std::vector<std::shared_ptr<OrtCustomOp>>(int threads)>& make);

}  // namespace sam3::kernels
