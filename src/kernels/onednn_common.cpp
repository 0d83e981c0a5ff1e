#include "kernels/onednn_common.h"

#if SAM3_HAVE_OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

namespace sam3::kernels {

dnnl::engine& cpu_engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

std::string onednn_version() {
  const auto* v = dnnl::version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

void use_threads(int threads) {
#if SAM3_HAVE_OPENMP
  if (threads > 0) omp_set_num_threads(threads);  // this thread's parallel regions
#else
  (void)threads;
#endif
}

void execute(const Primitive& p, std::unordered_map<int, dnnl::memory> args) {
  // Uninitialised (a vector would zero megabytes per call); oneDNN writes before it reads.
  const std::unique_ptr<std::uint8_t[]> scratch(new std::uint8_t[std::max<size_t>(p.scratchpad_bytes, 1)]);
  args[DNNL_ARG_SCRATCHPAD] = dnnl::memory(
      dnnl::memory::desc({static_cast<dnnl::memory::dim>(p.scratchpad_bytes)}, dnnl::memory::data_type::u8, dnnl::memory::format_tag::a),
      cpu_engine(), scratch.get());
  dnnl::stream s(cpu_engine());
  p.primitive.execute(s, args);
  s.wait();
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void add_op_domain(Ort::SessionOptions& options, const char* domain, int threads,
                   const std::function<std::vector<std::shared_ptr<OrtCustomOp>>(int threads)>& make) {
  struct Registered {
    std::vector<std::shared_ptr<OrtCustomOp>> ops;
    Ort::CustomOpDomain domain{nullptr};
  };
  static std::mutex mutex;
  static auto* domains = new std::map<std::pair<std::string, int>, Registered>();
  std::lock_guard lock(mutex);
  auto it = domains->find({domain, threads});
  if (it == domains->end()) {
    Registered r;
    r.ops = make(threads);
    r.domain = Ort::CustomOpDomain(domain);
    for (const auto& op : r.ops) r.domain.Add(op.get());
    it = domains->emplace(std::make_pair(std::string(domain), threads), std::move(r)).first;
  }
  options.Add(it->second.domain);
}

}  // namespace sam3::kernels
