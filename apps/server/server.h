// sam3 serve: an HTTP API and web page over one shared Model.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace sam3::server {

struct ServerOptions {
  std::filesystem::path model_dir;
  std::filesystem::path fallback_vocabulary;
  std::string host = "127.0.0.1";
  int port = 8080;  // 0 picks a free port
  int workers = 1;  // inference workers sharing the model (each uses ONNX Runtime's threads)
  int threads = 0;  // ONNX Runtime intra-op threads per run (0 = one per core)
  std::size_t cache_mb = 2048;
  std::size_t queue_capacity = 16;
  std::size_t max_request_mb = 64;
  std::int64_t max_pixels = 100'000'000;
  int request_timeout_s = 300;
  std::string api_key;
  bool insecure = false;
};

bool is_loopback_host(const std::string& host);

// Blocks until SIGINT/SIGTERM, then finishes the requests in flight and returns 0.
// Throws sam3::Error for a refused configuration (non-local bind without a key, port in use).
int run_server(const ServerOptions& options);

}  // namespace sam3::server
