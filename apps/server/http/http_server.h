// An HTTP/1.1 server for hostile networks (Boost.Beast): every connection has deadlines for
// its request headers, its body and idle keep-alive waits; bodies are limited before they are
// read (Content-Length or chunked); a request can be refused from its headers alone (auth,
// method, size) without reading its body; the number of connections is capped, idle
// keep-alive connections giving way to new clients; responses are written under a deadline on
// their progress, and a body from a BodySource is read one piece at a time as the client takes
// it; routes marked quick answer on the I/O
// thread, so /health stays fast while every handler thread waits on inference; stop()
// drops idle and half-sent requests at once and gives requests in flight a bounded time.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "http/http_message.h"

namespace sam3::server {

struct HttpLimits {
  std::size_t max_body_bytes = 64u << 20;
  std::size_t max_header_bytes = 16u << 10;
  std::chrono::milliseconds header_timeout{10'000};  // request line and headers, from the first byte wait
  std::chrono::milliseconds body_timeout{120'000};   // the whole body
  std::chrono::milliseconds idle_timeout{15'000};    // keep-alive wait for the next request
  // A response's progress: a write that gets no byte to the client for this long ends the
  // connection; a slow client that keeps reading gets a body of any size.
  std::chrono::milliseconds write_timeout{60'000};
  int max_connections = 256;
  int handler_threads = 16;
};

// What to do with a request whose headers (not yet its body) have arrived.
struct Dispatch {
  std::optional<HttpResponse> reject;  // answer this without reading the body
  bool quick = false;                  // handle on the I/O thread (cheap, never blocks)
};

class HttpServer {
 public:
  using Screen = std::function<Dispatch(const HttpRequest& head)>;
  using Handler = std::function<HttpResponse(const HttpRequest& request)>;

  HttpServer(HttpLimits limits, Screen screen, Handler handler);
  ~HttpServer();

  // Binds and listens; returns the port (a free one for port 0). Throws sam3::Error kIo.
  int listen(const std::string& host, int port);
  // Serves until stop(); returns true if every request in flight was answered within
  // `drain` after stop(), false if some were still running.
  bool run(std::chrono::milliseconds drain);
  void stop();  // thread-safe

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace sam3::server
