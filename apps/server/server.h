// sam3 serve: an HTTP API and web page over one shared Model.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "protocols/cvat.h"
#include "protocols/task_images.h"
#include "sam3/execution_provider.h"
#include "sam3/model.h"

namespace sam3::server {

struct ServerOptions {
  std::filesystem::path model_dir;
  // SAM3's interactive model beside the text one (clicks and "everything"); empty: none, or
  // model_dir itself when that is the interactive model.
  std::filesystem::path interactive_model_dir;
  std::filesystem::path fallback_vocabulary;
  std::vector<ExecutionProvider> providers;  // empty: the CPU; checked before the server listens
  Precision precision = Precision::kExact;   // of the models' float work (sam3/model.h)
  std::string host = "127.0.0.1";
  int port = 8080;  // 0 picks a free port
  int workers = 1;  // inference workers sharing the model (each uses ONNX Runtime's threads)
  int threads = 0;  // ONNX Runtime intra-op threads per run (0 = one per core)
  std::size_t cache_mb = 2048;
  std::size_t queue_capacity = 16;
  std::size_t max_request_mb = 64;
  std::int64_t max_pixels = 100'000'000;
  int request_timeout_s = 300;   // a request's whole time: fetches, encodes, every prompt
  std::size_t max_prompts = 64;  // per request on every route (and exemplar boxes per prompt)
  std::string api_key;
  bool insecure = false;
  std::vector<std::string> allowed_hosts;    // Host names answered besides this machine's ("*": any)
  std::vector<std::string> allowed_origins;  // web origins allowed to call the API ("*": any)
  int max_connections = 256;
  int header_timeout_s = 10;           // for a request's line and headers to arrive
  int idle_timeout_s = 15;             // an idle keep-alive connection is closed after this
  int write_timeout_s = 60;            // a client taking no byte of an answer this long is cut off
  int shutdown_timeout_s = 30;         // requests in flight get this long after SIGTERM
  LabelStudioOptions label_studio;     // where the Label Studio backend fetches task images
  std::vector<CvatLabel> cvat_labels;  // what the CVAT detector finds (none: it is not listed)
  // CVAT tracker sessions: a budget of bytes (each session reserves its memory bank once full),
  // a share of it per client, a count per client, and how long another client's session must
  // be unused before a new one may drop it (tracker_sessions.h).
  std::uint64_t cvat_tracker_memory_mb = 4096;
  std::uint64_t cvat_tracker_client_memory_mb = 1024;
  std::size_t cvat_tracker_sessions = 32;
  int cvat_tracker_idle_s = 600;
};

// Whether every address the host name resolves to is a loopback address (a name is looked
// up, not compared as text: "127.0.0.1.nip.io" is decided by what it resolves to).
bool is_loopback_host(const std::string& host);

// Blocks until SIGINT/SIGTERM, then finishes the requests in flight and returns 0.
// Throws sam3::Error for a refused configuration (non-local bind without a key, port in use).
int run_server(const ServerOptions& options);

}  // namespace sam3::server
