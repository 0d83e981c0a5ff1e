// Execution providers chosen by name: parsing and validation, what the loaded ONNX Runtime
// has, and the refusal of every provider it lacks (this machine's ONNX Runtime is CPU-only; a
// provider that is present is skipped rather than assumed missing).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "runtime/model_file_cache.h"
#include "runtime/provider_chain.h"
#include "sam3/error.h"
#include "sam3/execution_provider.h"
#include "support/files.h"
#include "support/test_images.h"

namespace {

using sam3::ErrorCode;
using sam3::ExecutionProvider;

// The message of the sam3::Error `f` throws with `code` ("" and a test failure if none).
template <typename F>
std::string error_of(F&& f, ErrorCode code) {
  try {
    f();
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no sam3::Error thrown";
  return {};
}

// Whether the provider can start here (this machine's ONNX Runtime lists CUDA and TensorRT
// without shipping their libraries: listed, not usable).
bool usable(const std::string& name) {
  const auto all = sam3::usable_execution_providers();
  return std::find(all.begin(), all.end(), name) != all.end();
}

TEST(ExecutionProviders, ParsesNamesOptionsAndFallbackLists) {
  const auto p = sam3::parse_execution_provider("cuda:device_id=1:gpu_mem_limit=2147483648");
  EXPECT_EQ(p.name, "cuda");
  EXPECT_EQ(p.options.at("device_id"), "1");
  EXPECT_EQ(p.options.at("gpu_mem_limit"), "2147483648");
  EXPECT_EQ(sam3::to_string(p), "cuda:device_id=1:gpu_mem_limit=2147483648");
  // ONNX Runtime's own names and any case name the same provider.
  EXPECT_EQ(sam3::parse_execution_provider("CUDAExecutionProvider").name, "cuda");
  EXPECT_EQ(sam3::parse_execution_provider("TensorRT").name, "tensorrt");
  EXPECT_EQ(sam3::parse_execution_provider("AUTO").name, "auto");

  const auto list = sam3::parse_execution_providers({"tensorrt:device_id=0,cuda", "cpu"});
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].name, "tensorrt");
  EXPECT_EQ(list[1].name, "cuda");
  EXPECT_EQ(list[2].name, "cpu");
  EXPECT_TRUE(sam3::parse_execution_providers({}).empty());
}

TEST(ExecutionProviders, BadNamesOptionsAndDeviceIdsAreRefusedWithWhatToWrite) {
  const auto bad = [](const std::string& spec) {
    return error_of([&] { sam3::parse_execution_providers({spec}); }, ErrorCode::kInvalidArgument);
  };
  EXPECT_NE(bad("cudaa").find("unknown execution provider 'cudaa'; use one of: tensorrt, cuda, coreml, dml, openvino, cpu, auto"),
            std::string::npos);
  EXPECT_NE(bad("").find("has no name"), std::string::npos);
  EXPECT_NE(bad("cuda:device=1").find("cuda does not take the option 'device'; it takes: device_id,"), std::string::npos);
  EXPECT_NE(bad("cpu:device_id=0").find("cpu takes no options"), std::string::npos);
  EXPECT_NE(bad("cuda:device_id=one").find("device_id must be a device number 0 or more"), std::string::npos);
  EXPECT_NE(bad("cuda:device_id=-1").find("got '-1'"), std::string::npos);
  EXPECT_NE(bad("auto:device_id=x").find("auto: device_id must be"), std::string::npos);
  EXPECT_NE(bad("cuda:device_id").find("'device_id' is not key=value; write e.g. cuda:device_id=1"), std::string::npos);
  EXPECT_NE(bad("cuda:device_id=").find("the option 'device_id' has no value"), std::string::npos);
  EXPECT_NE(bad("cuda,cuda").find("'cuda' is listed twice"), std::string::npos);
  EXPECT_NE(bad("cpu,cuda").find("cpu runs every operator, so 'cuda' after it would never be used; put cpu last"), std::string::npos);
  // The same checks guard lists built in code.
  EXPECT_NE(error_of(
                [] {
                  sam3::validate_execution_providers({{"gpu", {}}});
                },
                ErrorCode::kInvalidArgument)
                .find("unknown execution provider 'gpu'"),
            std::string::npos);
  EXPECT_NE(error_of(
                [] {
                  sam3::resolve_execution_providers({{"cuda", {{"device_id", "1.5"}}}});
                },
                ErrorCode::kInvalidArgument)
                .find("device_id must be"),
            std::string::npos);
}

TEST(ExecutionProviders, AvailableListsTheCpuLastAndOnlyKnownNames) {
  const auto all = sam3::available_execution_providers();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.back(), "cpu");
  const auto& names = sam3::execution_provider_names();
  size_t last = 0;
  for (const auto& p : all) {
    const auto at = std::find(names.begin(), names.end(), p);
    ASSERT_NE(at, names.end()) << p;
    EXPECT_GE(static_cast<size_t>(at - names.begin()), last) << "best first";
    last = at - names.begin();
  }
  const auto usable_ones = sam3::usable_execution_providers();
  EXPECT_EQ(usable_ones.back(), "cpu");
  for (const auto& p : usable_ones) EXPECT_NE(std::find(all.begin(), all.end(), p), all.end()) << p;
}

TEST(ExecutionProviders, CpuAndAutoResolveToWhatTheRuntimeHas) {
  EXPECT_EQ(sam3::resolve_execution_providers({}), std::vector<std::string>{"cpu"});
  EXPECT_EQ(sam3::resolve_execution_providers({{"cpu", {}}}), std::vector<std::string>{"cpu"});
  const auto chosen = sam3::resolve_execution_providers({{"auto", {}}});
  EXPECT_EQ(chosen.back(), "cpu");
  if (sam3::usable_execution_providers() == std::vector<std::string>{"cpu"}) {
    EXPECT_EQ(chosen, std::vector<std::string>{"cpu"}) << "no accelerator here: auto falls back to the CPU";
  }
}

TEST(ExecutionProviders, EveryMissingProviderIsRefusedNamingWhatThereIsAndHowToGetIt) {
  const std::map<std::string, std::string> how = {{"cuda", "onnxruntime-linux-x64-gpu"},
                                                  {"tensorrt", "TensorRT libraries"},
                                                  {"openvino", "OpenVINO"},
                                                  {"coreml", "Apple devices only"},
                                                  {"dml", "Windows only"}};
  int refused = 0;
  for (const auto& [name, hint] : how) {
    if (usable(name)) continue;
    const std::string message = error_of([&] { sam3::resolve_execution_providers({{name, {}}}); }, ErrorCode::kRuntime);
    // Not in the library at all, or listed by it without being able to start (and why).
    const bool absent = message.find("execution provider '" + name + "' is not in the loaded ONNX Runtime 1.") == 0;
    const bool cannot_start = message.find("execution provider '" + name + "' is listed by the loaded ONNX Runtime 1.") == 0 &&
                              message.find(" but cannot start here (") != std::string::npos;
    EXPECT_TRUE(absent || cannot_start) << message;
    if (absent) EXPECT_NE(message.find(", which has: "), std::string::npos) << message;
    EXPECT_NE(message.find(hint), std::string::npos) << message;
    EXPECT_NE(message.find("Using a GPU"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "one line";
    ++refused;
  }
  if (!usable("cuda")) {
    EXPECT_NE(error_of(
                  [] {
                    sam3::resolve_execution_providers({{"cuda", {}}});
                  },
                  ErrorCode::kRuntime)
                  .find("SAM3_ORT_ROOT"),
              std::string::npos);
    // Later entries of a fallback list are used when an earlier one is missing.
    EXPECT_EQ(sam3::resolve_execution_providers({{"cuda", {}}, {"cpu", {}}}), std::vector<std::string>{"cpu"});
  }
  if (refused == 0) GTEST_SKIP() << "this ONNX Runtime has every provider";
}

TEST(ExecutionProviders, GraphPreparationsArePerProviderAndKeyedByIt) {
  using sam3::runtime::preparation_for;
  using sam3::runtime::ProviderChain;
  const auto cpu = preparation_for(ProviderChain{});
  EXPECT_TRUE(cpu.cpu_int8 && cpu.fuse_attention && cpu.save_optimized);
  EXPECT_EQ(cpu.cache_key, "") << "CPU entries keep the key they had";
  const auto cuda = preparation_for(ProviderChain{{{"cuda", {}}}});
  EXPECT_FALSE(cuda.cpu_int8);
  EXPECT_TRUE(cuda.fuse_attention) << "CUDA has a MultiHeadAttention kernel";
  EXPECT_FALSE(cuda.save_optimized);
  EXPECT_EQ(cuda.cache_key, "cuda+cpu");
  for (const char* compiling : {"tensorrt", "openvino", "coreml"}) {
    const auto p = preparation_for(ProviderChain{{{compiling, {}}}});
    EXPECT_FALSE(p.cpu_int8 || p.fuse_attention || p.save_optimized) << compiling;
  }
  EXPECT_EQ(preparation_for(ProviderChain{{{"tensorrt", {}}, {"cuda", {}}}}).cache_key, "tensorrt+cuda+cpu");
}

TEST(ExecutionProviders, PreparedFilesAreCachedPerProvider) {
  namespace fs = std::filesystem;
  using sam3::runtime::FileCacheOptions;
  const fs::path dir = sam3::test::fresh_test_dir("sam3_providers");
  const fs::path file = dir / "projected.onnx";
  fs::copy_file(sam3::test::test_models_dir() / "attention" / "projected.fuse2.onnx", file);

  const FileCacheOptions cpu;
  const auto on_cpu = sam3::runtime::prepare_model_file(file, cpu);
  EXPECT_EQ(on_cpu.fused_attention, 2);
  EXPECT_FALSE(on_cpu.save_optimized.empty()) << "CPU entries keep ONNX Runtime's optimized graph";

  FileCacheOptions cuda;  // what preparation_for gives a cuda session
  cuda.cpu_int8 = false;
  cuda.save_optimized = false;
  cuda.provider_key = "cuda+cpu";
  const auto on_cuda = sam3::runtime::prepare_model_file(file, cuda);
  EXPECT_NE(on_cuda.entry, on_cpu.entry) << "the cache is keyed by provider";
  EXPECT_EQ(on_cuda.load_path, on_cuda.entry / "prepared.onnx");
  EXPECT_EQ(on_cuda.fused_attention, 2);
  EXPECT_TRUE(on_cuda.save_optimized.empty()) << "no optimized graph saved for a GPU session";
  EXPECT_TRUE(sam3::runtime::has_prepared_file(file, cuda));
  const auto again = sam3::runtime::prepare_model_file(file, cuda);
  EXPECT_EQ(again.load_path, on_cuda.load_path) << "the second load uses the cached rewrite";
  EXPECT_EQ(again.fused_attention, 2) << "read back from meta.json";
  EXPECT_FALSE(again.pre_optimized) << "ONNX Runtime still optimizes it for the provider";

  FileCacheOptions tensorrt = cuda;  // TensorRT fuses attention itself: nothing of sam3's to keep
  tensorrt.fuse_attention = false;
  tensorrt.provider_key = "tensorrt+cuda+cpu";
  const auto on_tensorrt = sam3::runtime::prepare_model_file(file, tensorrt);
  EXPECT_EQ(on_tensorrt.load_path, file);
  EXPECT_TRUE(on_tensorrt.entry.empty());
  EXPECT_FALSE(sam3::runtime::has_prepared_file(file, tensorrt));
  fs::remove_all(dir);
}

}  // namespace
