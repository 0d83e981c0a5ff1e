#include "server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

#include "api.h"
#include "http/http_server.h"
#include "protocols/cvat.h"
#include "protocols/label_studio_backend.h"
#include "protocols/x_anylabeling.h"
#include "web_app.h"
#include "sam3/error.h"
#include "sam3/log.h"
#include "sam3/model_inspect.h"

namespace sam3::server {

bool is_loopback_host(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &list) != 0 || !list) return false;
  bool all = true;
  for (addrinfo* a = list; a; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      all = all && (ntohl(reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr.s_addr) >> 24) == 127;
    } else if (a->ai_family == AF_INET6) {
      const auto& addr = reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr;
      all = all && IN6_IS_ADDR_LOOPBACK(&addr);
    } else {
      all = false;
    }
  }
  ::freeaddrinfo(list);
  return all;
}

namespace {

// A --host that does not resolve is said as such, before the loopback rule (which would call it
// "not only this machine").
void check_host_resolves(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const int status = ::getaddrinfo(host.c_str(), nullptr, &hints, &list);
  if (list) ::freeaddrinfo(list);
  if (status != 0) {
    throw Error(ErrorCode::kInvalidArgument, "--host " + host + " does not resolve (" + ::gai_strerror(status) +
                                                 "); give an address of this machine (127.0.0.1, ::1, 0.0.0.0) or a name that resolves");
  }
}

// The model folders, before the server listens (a mistyped folder never leaves a server that can
// never answer): what Model::load checks before it opens a file. The load itself runs in the
// background (/health says "loading" meanwhile); if it fails, the server stops.
void check_model_folders(const ServerOptions& options) {
  check_model_folder(options.model_dir);
  if (options.interactive_model_dir.empty()) return;
  if (const Layout layout = check_model_folder(options.interactive_model_dir); !(layout == Layout::kTracker)) {
    throw Error(ErrorCode::kModelMismatch,
                "--interactive-models " + options.interactive_model_dir.string() + " holds a text-prompted " + layout_name(layout) +
                    " model, not SAM3's interactive one (vision_encoder.onnx, prompt_encoder_mask_decoder.onnx)");
  }
}

}  // namespace

int run_server(const ServerOptions& options) {
  check_host_resolves(options.host);
  if (!is_loopback_host(options.host) && options.api_key.empty() && !options.insecure) {
    throw Error(ErrorCode::kInvalidArgument,
                "refusing to listen on " + options.host +
                    " without --api-key: it is not (only) this machine, so anyone "
                    "on the network could use it; pass --api-key KEY (or --insecure if the network is trusted)");
  }
  if (options.cvat_tracker_client_memory_mb > options.cvat_tracker_memory_mb) {
    throw Error(ErrorCode::kInvalidArgument, "--cvat-tracker-client-memory (" + std::to_string(options.cvat_tracker_client_memory_mb) +
                                                 " MB) is more than --cvat-tracker-memory (" +
                                                 std::to_string(options.cvat_tracker_memory_mb) +
                                                 " MB), the budget all clients share; lower it or raise the budget");
  }
  if (!options.label_studio.api_key.empty() && options.label_studio.url.empty()) {
    log(LogLevel::kWarning,
        "LABEL_STUDIO_API_KEY is set without LABEL_STUDIO_URL: the key is sent only to a configured "
        "address, so tasks are fetched with the token Label Studio sends in /setup, if any; set "
        "LABEL_STUDIO_URL (--label-studio-url) to use the key");
  }
  // SIGINT/SIGTERM are taken by a watcher thread (blocked everywhere else, before any
  // thread starts) that stops the server gracefully.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // A provider this ONNX Runtime lacks is refused now, not found later by the background load
  // (after the mask: trying a provider starts ONNX Runtime's threads).
  resolve_execution_providers(options.providers);
  check_model_folders(options);

  Api api(options);
  add_label_studio_routes(api, options.label_studio);
  add_x_anylabeling_routes(api);
  add_cvat_routes(api, options.cvat_labels,
                  {.total_bytes = options.cvat_tracker_memory_mb << 20,
                   .client_bytes = options.cvat_tracker_client_memory_mb << 20,
                   .client_sessions = options.cvat_tracker_sessions,
                   .idle = std::chrono::seconds(options.cvat_tracker_idle_s)});
  add_web_app_routes(api, options, default_web_app_files());
  HttpLimits limits;
  limits.max_body_bytes = options.max_request_mb * 1024 * 1024;
  limits.max_connections = options.max_connections;
  limits.header_timeout = std::chrono::seconds(options.header_timeout_s);
  limits.idle_timeout = std::chrono::seconds(options.idle_timeout_s);
  limits.write_timeout = std::chrono::seconds(options.write_timeout_s);
  // Room for every request a worker or the queue can hold and every fetch in flight, so that
  // neither kind can take the threads the other (and /v1/images) needs.
  limits.handler_threads = std::max(8, options.workers + static_cast<int>(options.queue_capacity) + options.label_studio.max_fetches);
  HttpServer http(
      limits, [&api](const HttpRequest& head) { return api.screen(head); },
      [&api](const HttpRequest& request) { return api.handle(request); });
  const int port = http.listen(options.host, options.port);
  api.set_port(port);

  std::thread loader([&api, &http] {
    if (!api.load_model()) http.stop();  // run() returns; the error is thrown below
  });
  std::thread watcher([&http, signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    if (sig == 0) return;
    log(LogLevel::kWarning, std::string("received ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") + "; finishing requests in flight");
    http.stop();
  });
  const std::string shown_host = options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  std::printf("sam3 serve: listening on http://%s:%d\n", shown_host.c_str(), port);
  std::fflush(stdout);
  const bool drained = http.run(std::chrono::seconds(options.shutdown_timeout_s));
  if (!drained) {
    // Inference cannot be interrupted; the process ends without waiting for it.
    log(LogLevel::kWarning, "requests still running after " + std::to_string(options.shutdown_timeout_s) + " s were abandoned");
    std::fflush(stderr);
    ::_exit(0);
  }
  api.stop_workers();
  loader.join();
  if (watcher.joinable()) {
    pthread_kill(watcher.native_handle(), SIGTERM);  // run ended without a signal: wake the watcher
    watcher.join();
  }
  // A model that cannot load ends sam3 serve with the library's error (exit 4 for a model's, as
  // sam3 segment): a server that could never answer is not left running.
  if (const auto error = api.load_error()) std::rethrow_exception(error);
  return 0;
}

}  // namespace sam3::server
