// sam3: command-line front end over the sam3cpp library.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <opencv2/core/utils/logger.hpp>

#include "cli_common.h"
#include "sam3/log.h"
#include "sam3/model.h"
#include "sam3/version.h"

int main(int argc, char** argv) {
  using namespace sam3::cli;
  // Past a file-size limit (ulimit -f) a write fails with EFBIG and sam3 says so (exit 6), rather
  // than dying of SIGXFSZ without a word.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"sam3: find every instance of a text prompt in images with Meta's SAM3 (ONNX Runtime)"};
  app.name("sam3");
  app.set_version_flag("--version", [] {
    const auto usable = sam3::usable_execution_providers();
    std::string providers, idle;
    for (const auto& p : usable) providers += (providers.empty() ? "" : ", ") + p;
    for (const auto& p : sam3::available_execution_providers()) {
      if (std::find(usable.begin(), usable.end(), p) == usable.end()) idle += (idle.empty() ? "" : ", ") + p;
    }
    return std::string("sam3cpp ") + SAM3_VERSION_STRING + " (ONNX Runtime " + sam3::onnxruntime_version() + "; int8 products on " +
           sam3::int8_kernels() + "; bf16 work of --precision fast on " + sam3::bf16_kernels() + ")\nexecution providers: " + providers +
           (idle.empty() ? ""
                         : "\nlisted by ONNX Runtime but unable to start here: " + idle +
                               " (--provider NAME says why; see the README's 'Using a GPU')");
  });
  app.require_subcommand(1);
  app.fallthrough();
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "More diagnostics on stderr");
  app.add_flag("-q,--quiet", quiet, "Only errors on stderr");

  app.failure_message(usage_failure_message);  // every subcommand's errors go through the main app's
  Runner run;
  add_segment_command(app, run);
  add_tokenize_command(app, run);
  add_models_command(app, run);
  add_serve_command(app, run);
  add_label_command(app, run);
  add_web_command(app, run);
  add_track_command(app, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kUsage;
  }
  sam3::set_log_level(quiet ? sam3::LogLevel::kError : verbose ? sam3::LogLevel::kDebug : sam3::LogLevel::kWarning);
  // A file OpenCV cannot decode is reported once, as sam3's own one-line error; OpenCV's
  // warnings about it would only come first and confuse (kept with --verbose).
  if (!verbose) cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
  try {
    return run ? run() : kUsage;
  } catch (const sam3::Error& e) {
    print_error(e.what());
    return exit_code_for(e.code());
  } catch (const std::exception& e) {
    print_error(std::string("unexpected failure: ") + e.what());
    return kFailure;
  }
}
