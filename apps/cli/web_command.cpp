// sam3 web export DIR: the browser app (/app/ of sam3 serve) as static files.
#include <iostream>

#include "cli_common.h"
#include "sam3/tokenizer.h"
#include "web_export.h"

namespace sam3::cli {
namespace {

struct WebExportArgs {
  std::string out;
  std::string models_url;
};

int run_web_export(const WebExportArgs& args) {
  server::WebExportOptions o;
  o.out = args.out;
  o.models_url = args.models_url;
  o.vocabulary = bundled_vocabulary();
  const auto written = server::export_web_app(o);
  std::cout << "wrote " << written.size() << " files to " << o.out.string()
            << "; serve the folder with the headers of its _headers file (or nginx.conf): cross-origin isolation "
               "lets WASM use threads\n";
  return kOk;
}

}  // namespace

void add_web_command(CLI::App& app, Runner& run) {
  auto* web = app.add_subcommand("web", "The browser app: sam3's core in WebAssembly on ONNX Runtime Web");
  web->require_subcommand(1);
  auto args = std::make_shared<WebExportArgs>();
  auto* cmd = web->add_subcommand("export", "Write the app as static files (with a _headers file and an nginx snippet)");
  cmd->add_option("dir", args->out, "Folder to write (new, or one an earlier export wrote)")->required();
  cmd->add_option("--models-url", args->models_url,
                  "URL prefix of a model folder the app loads by default (else the user picks a folder, or ?models=URL)");
  cmd->callback([args, &run] { run = [args] { return run_web_export(*args); }; });
}

}  // namespace sam3::cli
