// What sam3 knows about each execution provider: ONNX Runtime's name for it, the options it
// takes and how to get an ONNX Runtime that has it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sam3::runtime {

struct ProviderInfo {
  std::string name;               // sam3's name ("cuda")
  std::string ort_name;           // Ort::GetAvailableProviders()'s name ("CUDAExecutionProvider")
  std::string title;              // for people ("CUDA")
  std::vector<std::string> keys;  // the options it takes (ONNX Runtime's names)
  bool takes_device_id = false;
  std::string how_to_get;  // what to install when the loaded ONNX Runtime lacks it
};

// Best first (the order `auto` tries): tensorrt, cuda, coreml, dml, openvino, cpu.
const std::vector<ProviderInfo>& provider_table();
// By sam3's name or ONNX Runtime's (case-insensitive); nullptr for neither.
const ProviderInfo* find_provider(std::string_view name);
std::string lower(std::string_view s);

}  // namespace sam3::runtime
