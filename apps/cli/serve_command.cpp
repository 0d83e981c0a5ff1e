// sam3 serve: the HTTP API and web page.
#include <cstdlib>

#include "cli_common.h"
#include "model_resolver.h"
#include "server.h"

namespace sam3::cli {

void add_serve_command(CLI::App& app, Runner& run) {
  struct Args {
    ModelSelection models;
    server::ServerOptions options;
    int fetch_max_mb = 64;
    std::vector<std::string> cvat_labels;
    std::string cvat_labels_file;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("serve", "HTTP API and web page for interactive and programmatic segmentation");
  add_model_options(*cmd, args->models);
  auto& o = args->options;
  cmd->add_option("--interactive-models", o.interactive_model_dir,
                  "SAM3's interactive model (vision_encoder + prompt_encoder_mask_decoder) beside the text model, "
                  "for clicks and \"everything\"; each image is encoded by a model only when a prompt needs it")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--host", o.host, "Address to bind (non-local needs --api-key or --insecure)")->capture_default_str();
  cmd->add_option("--port", o.port, "Port (0 picks a free one, printed on stdout)")->capture_default_str()->check(CLI::Range(0, 65535));
  cmd->add_option("--workers", o.workers, "Inference workers sharing the model")->capture_default_str()->check(CLI::Range(1, 64));
  cmd->add_option("--threads", o.threads, "ONNX Runtime intra-op threads per run (0 = one per core)")->check(CLI::NonNegativeNumber);
  // Upper bounds too: each is multiplied into bytes (an overflow wrapped to a tiny limit) or
  // becomes handler threads started at once (--queue 100000000 tried to start 10^8 threads).
  cmd->add_option("--cache-mb", o.cache_mb, "Memory for cached image embeddings")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 24));
  cmd->add_option("--queue", o.queue_capacity, "Requests waiting for a worker before 503")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{4096}));
  cmd->add_option("--max-request-mb", o.max_request_mb, "Largest request body")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  cmd->add_option("--max-pixels", o.max_pixels, "Largest image")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--timeout", o.request_timeout_s, "Seconds a request may wait and run")
      ->capture_default_str()
      ->check(CLI::Range(1, 31'536'000));
  cmd->add_option("--max-prompts", o.max_prompts,
                  "Prompts per request on every route (Label Studio labels, X-AnyLabeling texts), and boxes per prompt")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--api-key", o.api_key,
                  "Require the key on the API and the labeling-tool routes (\"Authorization: Bearer KEY\", X-API-Key, "
                  "HTTP Basic password, \"Token: KEY\")");
  cmd->add_flag("--insecure", o.insecure, "Allow a non-local bind without an API key");
  cmd->add_option("--allowed-host", o.allowed_hosts, "Host name clients may use besides localhost/127.0.0.1 (repeatable; * for any)");
  cmd->add_option("--allowed-origin", o.allowed_origins,
                  "Web origin allowed to call the API, e.g. http://localhost:8081 (repeatable; * for any)");
  cmd->add_option("--max-connections", o.max_connections, "Open connections at most (idle ones give way to new clients)")
      ->capture_default_str()
      ->check(CLI::Range(4, 100000));
  cmd->add_option("--header-timeout", o.header_timeout_s, "Seconds a request's headers may take to arrive")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  cmd->add_option("--idle-timeout", o.idle_timeout_s, "Seconds an idle keep-alive connection stays open")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  cmd->add_option("--write-timeout", o.write_timeout_s,
                  "Seconds a client may take no byte of an answer before it is cut off (a slow client that keeps reading gets it whole)")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  cmd->add_option("--shutdown-timeout", o.shutdown_timeout_s, "Seconds requests in flight get after SIGTERM/SIGINT")
      ->capture_default_str()
      ->check(CLI::Range(0, 3600));
  auto& ls = o.label_studio;
  cmd->add_option("--label-studio-url", ls.url, "Label Studio's address, for task images (e.g. http://localhost:8080)")
      ->envname("LABEL_STUDIO_URL");
  cmd->add_option("--label-studio-api-key", ls.api_key, "Label Studio token (legacy or personal access token)")
      ->envname("LABEL_STUDIO_API_KEY");
  cmd->add_option("--local-files-root", ls.local_files_root, "Read /data/local-files/?d=... task images from this folder")
      ->envname("LOCAL_FILES_DOCUMENT_ROOT");
  cmd->add_option("--fetch-host", ls.fetch_hosts,
                  "Other host whose image URLs tasks may name, host or host:port (repeatable; * for any; never sent the token)");
  cmd->add_option("--fetch-max-mb", args->fetch_max_mb, "Largest task image fetched")->capture_default_str()->check(CLI::Range(1, 4096));
  cmd->add_option("--fetch-timeout", ls.fetch_timeout_s, "Seconds a task image fetch may take (within --timeout)")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  cmd->add_option("--max-fetches", ls.max_fetches, "Task image fetches in flight at once (more are answered 503)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  cmd->add_option("--label-studio-video-frames", ls.video_frames,
                  "Frames a Label Studio video task tracks: after a keyframe's box, or from the first with the labels as prompts")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--cvat-label", args->cvat_labels,
                  "A label CVAT's detector finds: NAME or NAME=PROMPT,PROMPT (repeatable; see docs/cvat.md)");
  cmd->add_option("--cvat-labels", args->cvat_labels_file, "A file of CVAT labels, one NAME[=PROMPT,...] per line")
      ->check(CLI::ExistingFile);
  cmd->add_option("--cvat-tracker-memory", args->options.cvat_tracker_memory_mb,
                  "MB all CVAT tracker sessions may hold together, each counted at its memory bank's full size (docs/cvat.md)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--cvat-tracker-client-memory", args->options.cvat_tracker_client_memory_mb,
                  "MB of CVAT tracker sessions one client (a peer address) may hold; its own least recently used make room (docs/cvat.md)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--cvat-tracker-sessions", args->options.cvat_tracker_sessions,
                  "CVAT tracker sessions one client (a peer address) may hold; its least recently used is dropped beyond it")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--cvat-tracker-idle", args->options.cvat_tracker_idle_s,
                  "Seconds a CVAT client's tracker session must go unused before another client's new session may drop it (docs/cvat.md)")
      ->capture_default_str()
      ->check(CLI::Range(1, 7 * 24 * 3600));
  cmd->callback([args, &run] {
    auto& ls = args->options.label_studio;
    ls.max_image_bytes = std::int64_t{args->fetch_max_mb} << 20;
    if (const char* host = std::getenv("LABEL_STUDIO_HOST"); ls.url.empty() && host) ls.url = host;
    run = [args] {
      auto& cvat = args->options.cvat_labels;
      if (!args->cvat_labels_file.empty()) cvat = server::read_cvat_labels(args->cvat_labels_file);
      for (const auto& l : args->cvat_labels) cvat.push_back(server::parse_cvat_label(l));
      args->options.providers = execution_providers(args->models);
      args->options.precision = precision_of(args->models.precision);
      args->options.model_dir = resolve_model_dir(args->models);
      return server::run_server(args->options);
    };
  });
}

}  // namespace sam3::cli
