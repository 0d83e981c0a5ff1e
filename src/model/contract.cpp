#include "model/contract.h"

namespace sam3::detail {
namespace {

std::vector<pure::TensorSpec> specs(const std::vector<runtime::TensorInfo>& tensors) {
  std::vector<pure::TensorSpec> out;
  for (const auto& t : tensors) out.push_back({t.name, static_cast<int>(t.type), t.shape});
  return out;
}

}  // namespace

pure::PartSpec part_spec(const runtime::Session& s) { return {s.path().string(), specs(s.inputs()), specs(s.outputs())}; }

void require_inputs(const runtime::Session& s, const std::vector<Expected>& expected) { pure::require_inputs(part_spec(s), expected); }
void require_outputs(const runtime::Session& s, const std::vector<Expected>& expected) { pure::require_outputs(part_spec(s), expected); }

}  // namespace sam3::detail
