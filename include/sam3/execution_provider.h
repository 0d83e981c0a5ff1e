// Which ONNX Runtime execution provider (CPU, CUDA, TensorRT, OpenVINO, CoreML, DirectML) a
// model's sessions run on, chosen by name:
//
//   sam3::ModelOptions options;
//   options.providers = sam3::parse_execution_providers({"cuda:device_id=1,cpu"});
//   auto model = sam3::Model::load("models/sam3", options);   // cuda, else cpu (one log line)
//
// A list is a fallback order: the providers the loaded ONNX Runtime has are given to it in
// that order (it runs each operator on the first that can), the others are skipped with one
// log line; when none of them is there, Model::load throws. `auto` is the best one there is
// (TensorRT, CUDA, CoreML, DirectML, OpenVINO), else the CPU. The CPU always runs what the
// others cannot.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sam3 {

struct ExecutionProvider {
  std::string name;  // cpu, cuda, tensorrt, openvino, coreml, dml or auto
  // The provider's own settings under ONNX Runtime's names, e.g. {"device_id", "1"} or
  // {"trt_fp16_enable", "1"}; each provider accepts the keys its documentation lists.
  std::map<std::string, std::string> options;
};

// sam3's provider names, best first: tensorrt, cuda, coreml, dml, openvino, cpu (and auto).
const std::vector<std::string>& execution_provider_names();

// "cuda", "cuda:device_id=1", "tensorrt:device_id=0:trt_fp16_enable=1". Validated as below.
ExecutionProvider parse_execution_provider(std::string_view spec);
// Each string may hold a comma-separated fallback order ("tensorrt,cuda,cpu"); repeated and
// comma-separated entries make one list, in order.
std::vector<ExecutionProvider> parse_execution_providers(const std::vector<std::string>& specs);
// Throws sam3::Error kInvalidArgument: an unknown name, an option the provider does not take,
// a device id that is not a number 0 or more, a provider listed twice or after cpu (which runs
// everything, so nothing after it would be used).
void validate_execution_providers(const std::vector<ExecutionProvider>& providers);
// "cuda:device_id=1" (the form parse_execution_provider reads).
std::string to_string(const ExecutionProvider& provider);

// sam3's names of the providers the loaded ONNX Runtime was built with, best first; "cpu" last.
std::vector<std::string> available_execution_providers();
// Those of them that can start here: a build may list CUDA without shipping its provider
// library (Microsoft's npm build does), or CUDA's own libraries or the device may be missing.
std::vector<std::string> usable_execution_providers();
// What Model::load would run on with these providers ({"cuda", "cpu"}), found without loading
// a model and without logging; throws as Model::load does for them (kInvalidArgument, kRuntime).
// For programs that must refuse a configuration at once (sam3 serve, before it listens).
std::vector<std::string> resolve_execution_providers(const std::vector<ExecutionProvider>& providers);

}  // namespace sam3
