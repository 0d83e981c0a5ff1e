#include "server.h"

#include <httplib.h>
#include <signal.h>

#include <cstdio>
#include <thread>

#include "api.h"
#include "sam3/error.h"
#include "sam3/log.h"

namespace sam3::server {

bool is_loopback_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

int run_server(const ServerOptions& options) {
  if (!is_loopback_host(options.host) && options.api_key.empty() && !options.insecure) {
    throw Error(ErrorCode::kInvalidArgument,
                "refusing to listen on " + options.host + " without --api-key: anyone on the network could use it; "
                "pass --api-key KEY (or --insecure if the network is trusted)");
  }
  // SIGINT/SIGTERM are taken by a watcher thread (blocked everywhere else, before any
  // thread starts) that stops the server gracefully.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Api api(options);
  httplib::Server http;
  http.set_payload_max_length(options.max_request_mb * 1024 * 1024);
  http.set_read_timeout(60, 0);
  http.set_write_timeout(60, 0);
  api.register_routes(http);

  const int port = options.port == 0 ? http.bind_to_any_port(options.host) : options.port;
  if (options.port != 0 && !http.bind_to_port(options.host, options.port)) {
    throw Error(ErrorCode::kIo, "cannot listen on " + options.host + ":" + std::to_string(options.port) +
                                    " (in use or not permitted); pick another --port");
  }
  if (port <= 0) throw Error(ErrorCode::kIo, "cannot listen on " + options.host + "; check --host");

  std::thread loader([&api] { api.load_model(); });
  std::thread watcher([&http, signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    log(LogLevel::kWarning, std::string("received ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") +
                                "; finishing requests in flight");
    http.stop();
  });
  const std::string shown_host = options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  std::printf("sam3 serve: listening on http://%s:%d\n", shown_host.c_str(), port);
  std::fflush(stdout);
  http.listen_after_bind();  // returns after stop(); requests in flight have been answered
  api.stop_workers();
  loader.join();
  if (watcher.joinable()) {
    // listen ended without a signal (error): wake the watcher so it can exit.
    pthread_kill(watcher.native_handle(), SIGTERM);
    watcher.join();
  }
  return 0;
}

}  // namespace sam3::server
