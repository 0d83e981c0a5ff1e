#include "model_resolver.h"

#include <cstdio>
#include <cstdlib>

#include "progress_bar.h"
#include "sam3/error.h"
#include "sam3/hub.h"

namespace sam3::cli {

void add_model_options(CLI::App& cmd, ModelSelection& selection) {
  cmd.add_option("-m,--models", selection.dir,
                 "Model folder (any generation `sam3 models inspect` recognises); default $SAM3_MODELS, else the default model "
                 "(downloaded on first use)");
  cmd.add_flag("--offline", selection.offline, "Never download a model");
  cmd.add_option("--provider", selection.providers,
                 "Execution provider: cpu (default), cuda, tensorrt, openvino, coreml, dml or auto (the best one this "
                 "ONNX Runtime has); options as cuda:device_id=1; repeatable or comma-separated as a fallback order; "
                 "'sam3 --version' lists what is available")
      ->delimiter(',')
      ->check(CLI::Validator(
          [](std::string& spec) -> std::string {
            try {
              parse_execution_provider(spec);
              return {};
            } catch (const Error& e) {
              return e.what();
            }
          },
          "PROVIDER"));
  add_precision_option(cmd, selection.precision);
}

void add_precision_option(CLI::App& cmd, std::string& value) {
  cmd.add_option("--precision", value,
                 "exact (default): float work in float; fast: attention and large float products in bf16 on oneDNN "
                 "where the CPU has bf16 instructions (masks may differ slightly; 'sam3 --version' says what runs)")
      ->check(CLI::IsMember({"exact", "fast"}));
}

Precision precision_of(const std::string& value) { return value == "fast" ? Precision::kFast : Precision::kExact; }

std::vector<ExecutionProvider> execution_providers(const ModelSelection& selection) {
  return parse_execution_providers(selection.providers);
}

std::filesystem::path resolve_model_dir(const ModelSelection& selection) {
  if (!selection.dir.empty()) return selection.dir;
  if (const char* env = std::getenv("SAM3_MODELS"); env && *env) return env;
  if (!selection.registry_default) {  // the registry's default is an image model: a download that could not be used
    throw Error(ErrorCode::kModelNotFound,
                "video tracking runs SAM 3.1's ONNX bundle as ailia-models publishes it; give its folder with --models DIR "
                "or $SAM3_MODELS (docs/video.md says where its files are)");
  }
  const ModelStore store(hub_options_from_environment());
  const RegistryEntry& entry = default_registry_entry();
  if (store.state(entry) == ModelState::kComplete) return store.model_dir(entry);
  if (selection.offline) {
    throw Error(ErrorCode::kModelNotFound,
                "the default model " + entry.name + " is not downloaded and --offline is set; " + store.manual_download_help(entry));
  }
  std::fprintf(stderr, "sam3: first use: downloading the default model %s (%s, %s) from %s to %s\n", entry.name.c_str(), entry.repo.c_str(),
               human_bytes(entry.approx_bytes).c_str(), store.options().endpoint.c_str(), store.model_dir(entry).c_str());
  ProgressBar bar;
  auto dir = store.pull(entry, bar.callback());
  bar.finish();
  return dir;
}

}  // namespace sam3::cli
