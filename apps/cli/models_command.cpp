// sam3 models list|pull|verify|path|import: the local store of public SAM3 ONNX models.
#include <cstdio>
#include <iostream>

#include "cli_common.h"
#include "model_resolver.h"
#include "progress_bar.h"
#include "sam3/hub.h"
#include "sam3/model.h"
#include "sam3/model_inspect.h"

#include <nlohmann/json.hpp>

namespace sam3::cli {
namespace {

struct ModelsArgs {
  std::string name;
  std::string source;
  std::string models_dir;
  std::string int8 = "auto";
  std::string precision = "exact";
  bool json = false;
  bool accept_unpinned = false;
};

const RegistryEntry& entry_named(const std::string& name) {
  if (name.empty()) return default_registry_entry();
  if (const auto* e = find_registry_entry(name)) return *e;
  std::string known;
  for (const auto& e : model_registry()) known += (known.empty() ? "" : ", ") + e.name + " (" + e.repo + ")";
  throw Error(ErrorCode::kInvalidArgument, "unknown model '" + name + "'; known models: " + known);
}

int run_list() {
  const ModelStore store(hub_options_from_environment());
  std::printf("%-20s %-44s %-12s %-10s %s\n", "NAME", "REPOSITORY", "LAYOUT", "SIZE", "STATUS");
  for (const auto& e : model_registry()) {
    const auto state = store.state(e);
    std::string status = state == ModelState::kComplete ? "present" : state == ModelState::kPartial ? "partial" : "-";
    if (state != ModelState::kMissing) status += " (" + human_bytes(store.bytes_on_disk(e)) + " on disk)";
    std::printf("%-20s %-44s %-12s %-10s %s%s\n", e.name.c_str(), e.repo.c_str(), layout_name(e.layout),
                human_bytes(e.approx_bytes).c_str(), status.c_str(), &e == &default_registry_entry() ? "  [default]" : "");
  }
  std::printf("store: %s\n", store.options().cache_dir.c_str());
  return kOk;
}

int run_pull(const ModelsArgs& args) {
  HubOptions options = hub_options_from_environment();
  options.accept_unpinned = args.accept_unpinned;
  const ModelStore store(options);
  const auto& entry = entry_named(args.name);
  ProgressBar bar;
  const auto dir = store.pull(entry, bar.callback());
  bar.finish();
  std::fprintf(stderr, "sam3: %s is ready in %s\n", entry.name.c_str(), dir.c_str());
  return kOk;
}

int run_verify(const ModelsArgs& args) {
  const ModelStore store(hub_options_from_environment());
  const auto& entry = entry_named(args.name);
  ProgressBar bar;
  const auto problems = store.verify(entry, bar.callback());
  bar.finish();
  for (const auto& p : problems) std::fprintf(stderr, "sam3: %s: %s\n", entry.name.c_str(), p.c_str());
  if (!problems.empty()) return kFailure;
  std::printf("%s: all %zu files match their checksums\n", entry.name.c_str(), entry.files.size());
  return kOk;
}

// Scripts pass what it prints as --models: a folder that is not there (yet) would only fail later,
// as a missing model folder; so it fails here, saying how to get the model.
int run_path(const ModelsArgs& args) {
  const ModelStore store(hub_options_from_environment());
  const auto& entry = entry_named(args.name);
  if (const auto state = store.state(entry); state != ModelState::kComplete) {
    throw Error(ErrorCode::kModelNotFound,
                entry.name + (state == ModelState::kPartial ? " is only partly downloaded" : " is not downloaded") + " (it goes in " +
                    store.model_dir(entry).string() + "); `sam3 models pull " + entry.name + "` downloads it");
  }
  std::printf("%s\n", store.model_dir(entry).c_str());
  return kOk;
}

int run_import(const ModelsArgs& args) {
  const ModelStore store(hub_options_from_environment());
  const auto& entry = store.import(args.source, args.name.empty() ? nullptr : &entry_named(args.name));
  std::printf("imported %s into %s\n", entry.name.c_str(), store.model_dir(entry).c_str());
  return kOk;
}

int run_optimize(const ModelsArgs& args) {
  const std::filesystem::path dir = args.models_dir.empty() ? ModelStore(hub_options_from_environment()).model_dir(entry_named(args.name))
                                                            : std::filesystem::path(args.models_dir);
  ModelOptions options;
  options.int8_weights = args.int8 == "on" ? Int8Weights::kOn : args.int8 == "off" ? Int8Weights::kOff : Int8Weights::kAuto;
  options.precision = precision_of(args.precision);
  const auto first = Model::load(dir, options);
  const double first_ms = first->load_ms();
  for (const auto& f : first->files()) {
    std::printf("%-28s %s%s\n", f.file.filename().c_str(), f.pre_optimized ? "already prepared: " : "prepared: ", f.loaded_from.c_str());
    if (f.int8_weights) {
      std::printf("%-28s %d MatMulInteger weight%s rewritten as int8\n", "", f.int8_weights, f.int8_weights == 1 ? "" : "s");
    }
    if (f.uint8_weights) {
      std::printf("%-28s %d int8 MatMulInteger weight%s rewritten as uint8 (exact on this CPU)\n", "", f.uint8_weights,
                  f.uint8_weights == 1 ? "" : "s");
    }
    if (f.onednn_int8) {
      std::printf("%-28s %d int8 product%s on %s\n", "", f.onednn_int8, f.onednn_int8 == 1 ? "" : "s", int8_kernels().c_str());
    }
    if (f.fused_attention) {
      std::printf("%-28s %d attention block%s fused into MultiHeadAttention\n", "", f.fused_attention, f.fused_attention == 1 ? "" : "s");
    }
    if (f.bf16_attention + f.bf16_matmuls) {
      std::printf("%-28s %d attention and %d float product%s in bf16 on %s\n", "", f.bf16_attention, f.bf16_matmuls,
                  f.bf16_matmuls == 1 ? "" : "s", bf16_kernels().c_str());
    }
  }
  const auto second = Model::load(dir, options);
  std::printf("load: %.0f ms, then %.0f ms with the prepared files\n", first_ms, second->load_ms());
  return kOk;
}

nlohmann::ordered_json tensors_json(const std::vector<TensorDescription>& tensors) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& t : tensors) out.push_back({{"name", t.name}, {"type", t.type}, {"shape", t.shape}});
  return out;
}

std::string tensor_text(const TensorDescription& t) {
  std::string shape;
  for (auto d : t.shape) shape += (shape.empty() ? "" : ",") + (d < 0 ? std::string("?") : std::to_string(d));
  return t.name + "  " + t.type + " [" + shape + "]";
}

// A folder, or a registry name / repository id whose local copy is inspected.
int run_inspect(const ModelsArgs& args) {
  std::filesystem::path dir = args.name;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) dir = ModelStore(hub_options_from_environment()).model_dir(entry_named(args.name));
  ModelOptions options;
  const ModelInspection r = inspect_model(dir, options);
  if (args.json) {
    nlohmann::ordered_json files = nlohmann::ordered_json::array();
    for (const auto& f : r.files) {
      files.push_back({{"file", f.file.filename().string()},
                       {"bytes", f.bytes},
                       {"external_data_bytes", f.external_bytes},
                       {"prepared", f.prepared},
                       {"inputs", tensors_json(f.inputs)},
                       {"outputs", tensors_json(f.outputs)}});
      if (!f.error.empty()) files.back()["error"] = f.error;
    }
    nlohmann::ordered_json out = {{"directory", r.directory.string()},
                                  {"loads", r.problem.empty()},
                                  {"generation", r.generation},
                                  {"input", {{"width", r.input_width}, {"height", r.input_height}}},
                                  {"quirks", r.quirks},
                                  {"vocabulary", r.vocabulary.filename().string()},
                                  {"int8_kernels", r.int8_kernels},
                                  {"files", files}};
    if (!r.problem.empty()) out["problem"] = r.problem;
    std::printf("%s\n", out.dump(2).c_str());
    return r.problem.empty() ? kOk : kFailure;
  }
  std::printf("folder      %s\n", r.directory.c_str());
  if (r.problem.empty()) {
    std::printf("generation  %s\n", r.generation.c_str());
    std::printf("input       %d x %d (width x height)\n", r.input_width, r.input_height);
    std::printf("vocabulary  %s\n", r.vocabulary.filename().c_str());
    for (size_t i = 0; i < r.quirks.size(); ++i) std::printf("%s%s\n", i == 0 ? "quirks      " : "            ", r.quirks[i].c_str());
    std::printf("int8 on     %s\n", r.int8_kernels.c_str());
  } else {
    std::printf("loads       no: %s\n", r.problem.c_str());
  }
  for (const auto& f : r.files) {
    std::printf("\n%s  %s%s  %s\n", f.file.filename().c_str(), human_bytes(static_cast<std::int64_t>(f.bytes)).c_str(),
                f.external_bytes ? (" + " + human_bytes(static_cast<std::int64_t>(f.external_bytes)) + " in .data").c_str() : "",
                f.prepared         ? "prepared for this host"
                : f.external_bytes ? "not cached (weights in a sidecar are read in place)"
                                   : "not prepared (sam3 models optimize)");
    if (!f.error.empty()) std::printf("  unreadable: %s\n", f.error.c_str());
    for (const auto& t : f.inputs) std::printf("  in   %s\n", tensor_text(t).c_str());
    for (const auto& t : f.outputs) std::printf("  out  %s\n", tensor_text(t).c_str());
  }
  return r.problem.empty() ? kOk : kFailure;
}

}  // namespace

void add_models_command(CLI::App& app, Runner& run) {
  auto args = std::make_shared<ModelsArgs>();
  auto* cmd = app.add_subcommand("models", "List, download, verify and import the public SAM3 ONNX models");
  cmd->require_subcommand(1);
  const std::string name_help = "Registry name or hub repository id (default: the default model)";
  auto* list = cmd->add_subcommand("list", "Known models, which are present, their sizes");
  list->callback([&run] { run = [] { return run_list(); }; });
  auto* pull = cmd->add_subcommand("pull", "Download a model (resumable, verified); honours HF_ENDPOINT and HF_TOKEN");
  pull->add_option("name", args->name, name_help);
  pull->add_flag("--accept-unpinned", args->accept_unpinned,
                 "Take files whose sha256 differs from the one the registry pins (a changed repository)");
  pull->callback([args, &run] { run = [args] { return run_pull(*args); }; });
  auto* verify = cmd->add_subcommand("verify", "Re-hash a model's files against the recorded checksums");
  verify->add_option("name", args->name, name_help);
  verify->callback([args, &run] { run = [args] { return run_verify(*args); }; });
  auto* path = cmd->add_subcommand("path", "Print a downloaded model's local directory (and nothing else); fails if it is not downloaded");
  path->add_option("name", args->name, name_help);
  path->callback([args, &run] { run = [args] { return run_path(*args); }; });
  auto* optimize = cmd->add_subcommand("optimize", "Prepare a model for this host: int8 weights on VNNI/AMX CPUs, saved optimized graphs");
  optimize->add_option("name", args->name, name_help);
  optimize->add_option("-m,--models", args->models_dir, "A model folder instead of a registry model");
  add_precision_option(*optimize, args->precision);
  optimize->add_option("--int8", args->int8, "int8 weights: auto (only where exact and fast), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  optimize->callback([args, &run] { run = [args] { return run_optimize(*args); }; });
  auto* inspect = cmd->add_subcommand("inspect",
                                      "What a model folder holds: generation, each file's inputs and outputs, "
                                      "input size, quirks, cache state; or why it does not load");
  inspect->add_option("model", args->name, "A model folder, or a registry name")->required();
  inspect->add_flag("--json", args->json, "Machine-readable output");
  inspect->callback([args, &run] { run = [args] { return run_inspect(*args); }; });
  auto* import = cmd->add_subcommand("import", "Register model files fetched by hand (a folder or a .zip)");
  import->add_option("source", args->source, "Folder or .zip holding the model files")->required();
  import->add_option("--name", args->name, "Registry entry to import into (default: detected from the files)");
  import->callback([args, &run] { run = [args] { return run_import(*args);
};
}  // namespace sam3::cli
);
}

}  // namespace sam3::cli
