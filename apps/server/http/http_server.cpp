#include "http/http_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <list>
#include <mutex>
#include <thread>

#include "sam3/error.h"
#include "sam3/log.h"

namespace sam3::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// Threads that run handlers which may block (waiting on inference). Detached: at shutdown a
// handler still running is left to the process's exit rather than joined for minutes.
class HandlerPool {
 public:
  explicit HandlerPool(int threads) : state_(std::make_shared<State>()) {
    for (int i = 0; i < threads; ++i) {
      std::thread([state = state_] {
        for (;;) {
          std::function<void()> job;
          {
            std::unique_lock lock(state->mutex);
            state->cv.wait(lock, [&] { return state->stopping || !state->jobs.empty(); });
            if (state->jobs.empty()) return;
            job = std::move(state->jobs.front());
            state->jobs.pop_front();
          }
          job();
        }
      }).detach();
    }
  }
  ~HandlerPool() {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
    state_->cv.notify_all();
  }
  void post(std::function<void()> job) {
    std::lock_guard lock(state_->mutex);
    state_->jobs.push_back(std::move(job));
    state_->cv.notify_one();
  }

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable cv;
    std::deque<std::function<void()>> jobs;
    bool stopping = false;
  };
  std::shared_ptr<State> state_;
};

HttpResponse error_response(int status, const std::string& code, const std::string& message) {
  HttpResponse r;
  r.status = status;
  r.body = R"({"error":{"code":")" + code + R"(","message":")" + message + R"("}})";
  r.close = true;
  return r;
}

HttpResponse call_safely(const HttpServer::Handler& handler, const HttpRequest& request) {
  try {
    return handler(request);
  } catch (const std::exception& e) {
    log(LogLevel::kError, std::string("request handler failed: ") + e.what());
    return error_response(500, "internal", "the server failed to answer; see its log");
  }
}

}  // namespace

class Session;

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  HttpLimits limits;
  Screen screen;
  Handler handler;
  net::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  net::steady_timer drain_timer{ioc};
  std::list<std::weak_ptr<Session>> sessions;  // I/O thread only
  bool stopping = false;                       // I/O thread only
  std::chrono::milliseconds drain_timeout{10'000};
  std::atomic<int> in_flight{0};
  int goodbyes = 0;  // 503s to requests given up at shutdown, still being written (I/O thread only)
  HandlerPool pool;

  Impl(HttpLimits l, Screen s, Handler h) : limits(l), screen(std::move(s)), handler(std::move(h)), pool(l.handler_threads) {}
  void accept();
  void session_ended();
  bool make_room();
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  // Holds the server: a session that outlives run() (a handler still queued) keeps it valid.
  Session(tcp::socket socket, std::shared_ptr<HttpServer::Impl> server)
      : stream_(std::move(socket)), owner_(std::move(server)), server_(*owner_) {}
  ~Session() { server_.session_ended(); }

  void start() { read_header(server_.limits.header_timeout); }

  // Waiting for a request that has not begun to arrive: may be closed to make room.
  bool waiting() const { return state_ == State::kReadingHeader && buffer_.size() == 0; }
  bool handling() const { return state_ == State::kHandling || state_ == State::kWriting; }

  // A request still running when the shutdown's drain time is over is answered 503 now; its
  // handler's late answer is dropped. False when it is not running (nothing to say).
  bool give_up() {
    if (state_ != State::kHandling) return false;
    abandoned_ = true;
    respond(error_response(503, "shutting_down",
                           "the server is shutting down and this request did not finish within its --shutdown-timeout; retry "
                           "once it runs again"));
    return true;
  }

  void close() {
    if (abandoned_ && !said_goodbye_) {
      said_goodbye_ = true;
      if (--server_.goodbyes == 0) server_.drain_timer.cancel();  // every 503 written: the loop may end
    }
    state_ = State::kClosed;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

 private:
  enum class State { kReadingHeader, kReadingBody, kHandling, kWriting, kClosed };

  void read_header(std::chrono::milliseconds timeout) {
    state_ = State::kReadingHeader;
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(server_.limits.max_header_bytes));
    parser_->body_limit(server_.limits.max_body_bytes);
    stream_.expires_after(timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
  }

  // Transport errors: a response when one can still help the client, else just close.
  void fail(beast::error_code ec) {
    if (ec == http::error::body_limit) {
      return respond(error_response(413, "payload_too_large", "the request body is larger than the server's limit (--max-request-mb)"));
    }
    if (ec == http::error::header_limit) {
      return respond(error_response(431, "headers_too_large", "the request headers are too large"));
    }
    // A deadline passed (the stream has already closed the socket), or the client went away.
    if (ec == beast::error::timeout || ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
        ec == net::error::operation_aborted || ec == net::error::bad_descriptor || ec == http::error::partial_message) {
      return close();
    }
    respond(error_response(400, "bad_request", "malformed HTTP request"));
  }

  void on_header(beast::error_code ec) {
    if (ec) return fail(ec);
    const auto& msg = parser_->get();
    request_ = HttpRequest{};
    request_.method = std::string(msg.method_string());
    request_.target = std::string(msg.target());
    const size_t q = request_.target.find('?');
    request_.path = request_.target.substr(0, q);
    if (q != std::string::npos) request_.query = request_.target.substr(q + 1);
    for (const auto& field : msg) {
      const auto name = field.name_string();
      request_.headers.emplace_back(to_lower(std::string_view(name.data(), name.size())), std::string(field.value()));
    }
    keep_alive_ = msg.keep_alive();
    version_ = msg.version();
    request_.version = static_cast<int>(version_);
    beast::error_code peer_ec;
    const auto peer = stream_.socket().remote_endpoint(peer_ec);
    if (!peer_ec) request_.peer = peer.address().to_string();
    const int fd = stream_.socket().native_handle();
    request_.client_gone = [fd] {
      char c;
      const ssize_t n = ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
      return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
    };
    Dispatch d = server_.screen(request_);
    if (d.reject) {
      if (!parser_->is_done()) d.reject->close = true;  // the unread body would be taken for the next request
      return respond(std::move(*d.reject));
    }
    quick_ = d.quick;
    if (parser_->is_done()) return handle();
    state_ = State::kReadingBody;
    stream_.expires_after(server_.limits.body_timeout);
    if (beast::iequals(msg[http::field::expect], "100-continue")) {
      auto cont = std::make_shared<http::response<http::empty_body>>(http::status::continue_, version_);
      return http::async_write(stream_, *cont, [self = shared_from_this(), cont](beast::error_code ec, std::size_t) {
        if (ec) return self->close();
        self->read_body();
      });
    }
    read_body();
  }

  void read_body() {
    http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->fail(ec);
      self->request_.body = std::move(self->parser_->get().body());
      self->handle();
    });
  }

  void handle() {
    state_ = State::kHandling;
    stream_.expires_never();
    if (quick_) return respond(call_safely(server_.handler, request_));
    ++server_.in_flight;
    server_.pool.post([self = shared_from_this()] {
      HttpResponse response = call_safely(self->server_.handler, self->request_);
      net::post(self->server_.ioc, [self, response = std::move(response)]() mutable {
        --self->server_.in_flight;
        if (self->abandoned_) return;  // answered 503 at shutdown already
        self->respond(std::move(response));
      });
    });
  }

  void respond(HttpResponse r) {
    if (state_ == State::kClosed) return;
    state_ = State::kWriting;
    auto out = std::make_shared<Outgoing>();
    auto& res = out->res;
    res.result(static_cast<http::status>(r.status));
    res.version(version_ ? version_ : 11);
    res.set(http::field::server, "sam3");
    if (!r.content_type.empty()) res.set(http::field::content_type, r.content_type);
    for (const auto& [k, v] : r.headers) res.set(k, v);
    out->keep = keep_alive_ && !r.close && !server_.stopping;
    out->unread = !parser_ || !parser_->is_done();
    res.keep_alive(out->keep);
    res.body().data = nullptr;
    res.body().more = false;
    const auto code = static_cast<int>(r.status);
    const bool bodiless = (code >= 100 && code < 200) || code == 204 || code == 304;
    // HEAD: the route set Content-Length to what a GET would send; no body follows (RFC 9110).
    if (request_.method != "HEAD" && !bodiless) {
      if (r.source) {
        out->source = std::move(r.source);
        out->left = out->source->size();
        res.content_length(out->left);
        if (!out->refill()) return close();
      } else {
        out->body = std::move(r.body);
        res.content_length(out->body.size());
        res.body().data = out->body.data();
        res.body().size = out->body.size();
      }
    }
    out->serializer.emplace(res);
    out_ = std::move(out);
    send_some();
  }

  // The deadline is on progress: each write must get some bytes to the client within
  // write_timeout (a slow client that keeps reading gets a body of any size; one that stops
  // reading is cut off), and a body from a source is held one piece at a time.
  void send_some() {
    stream_.expires_after(server_.limits.write_timeout);
    http::async_write_some(stream_, *out_->serializer, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec == http::error::need_buffer) {
        if (!self->out_->refill()) return self->close();  // the file ended early: the length cannot be met
        ec = {};
      }
      if (ec) return self->close();
      if (!self->out_->serializer->is_done()) return self->send_some();
      const bool keep = self->out_->keep, unread = self->out_->unread;
      self->out_.reset();
      if (!keep) return unread ? self->linger() : self->close();
      self->read_header(self->server_.limits.idle_timeout);
    });
  }

  // A response being written: its body in memory, or read from its source one piece at a time.
  struct Outgoing {
    http::response<http::buffer_body> res;
    std::optional<http::response_serializer<http::buffer_body>> serializer;
    std::string body;
    std::shared_ptr<BodySource> source;
    std::uint64_t left = 0;  // the source's bytes not yet read
    std::vector<char> piece;
    bool keep = false, unread = false;

    // The source's next piece as the body's buffer; false when it gave nothing though bytes were due.
    bool refill() {
      static constexpr std::size_t kPiece = 64 * 1024;
      if (!source) return false;
      if (left == 0) {
        res.body().data = nullptr;
        res.body().size = 0;
        res.body().more = false;
        return true;
      }
      piece.resize(static_cast<std::size_t>(std::min<std::uint64_t>(kPiece, left)));
      std::size_t n = 0;
      try {
        n = source->read(piece.data(), piece.size());
      } catch (const std::exception& e) {
        log(LogLevel::kError, std::string("cannot read a response body: ") + e.what());
        return false;
      }
      if (n == 0 || n > piece.size()) return false;
      left -= n;
      res.body().data = piece.data();
      res.body().size = n;
      res.body().more = left > 0;
      return true;
    }
  };

  // Closing with unread request bytes makes the kernel reset the connection, and the client
  // may then lose the answer it was just sent: stop sending, discard what still arrives for a
  // short while, then close.
  void linger() {
    state_ = State::kClosed;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.expires_after(std::chrono::seconds(2));
    discard();
  }
  void discard() {
    stream_.async_read_some(net::buffer(scratch_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->close();
      self->discard();
    });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<HttpServer::Impl> owner_;
  HttpServer::Impl& server_;
  HttpRequest request_;
  std::shared_ptr<Outgoing> out_;
  State state_ = State::kReadingHeader;
  bool keep_alive_ = false, quick_ = false;
  bool abandoned_ = false, said_goodbye_ = false;  // given up at shutdown (give_up())
  unsigned version_ = 11;
  std::array<char, 16384> scratch_{};
};

void HttpServer::Impl::session_ended() {
  if (!stopping) return;
  sessions.remove_if([](const std::weak_ptr<Session>& w) { return w.expired(); });
  bool any = false;
  for (const auto& w : sessions) any = any || !w.expired();
  // The destructor runs while its weak_ptr already expired; once none is left, stop waiting.
  if (!any) drain_timer.cancel();
}

bool HttpServer::Impl::make_room() {
  sessions.remove_if([](const std::weak_ptr<Session>& w) { return w.expired(); });
  if (static_cast<int>(sessions.size()) < limits.max_connections) return true;
  for (const auto& w : sessions) {  // oldest first
    if (auto s = w.lock(); s && s->waiting()) {
      s->close();
      return true;
    }
  }
  return false;
}

void HttpServer::Impl::accept() {
  acceptor.async_accept(ioc, [this](beast::error_code ec, tcp::socket socket) {
    if (stopping || !acceptor.is_open()) return;
    if (!ec) {
      if (make_room()) {
        auto s = std::make_shared<Session>(std::move(socket), shared_from_this());
        sessions.push_back(s);
        s->start();
      } else {
        // Every connection is busy with a request: say so at once rather than hold this one.
        static const std::string busy =
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
            "Connection: close\r\nContent-Length: 79\r\n\r\n"
            R"({"error":{"code":"busy","message":"too many connections; retry in a moment."}})";
        beast::error_code ignored;
        socket.non_blocking(true, ignored);
        socket.write_some(net::buffer(busy), ignored);
        socket.shutdown(tcp::socket::shutdown_both, ignored);
      }
    }
    accept();
  });
}

HttpServer::HttpServer(HttpLimits limits, Screen screen, Handler handler)
    : impl_(std::make_shared<Impl>(limits, std::move(screen), std::move(handler))) {}

HttpServer::~HttpServer() = default;

int HttpServer::listen(const std::string& host, int port) {
  beast::error_code ec;
  tcp::resolver resolver(impl_->ioc);
  const auto results = resolver.resolve(host, std::to_string(port), tcp::resolver::passive, ec);
  if (ec || results.empty()) throw Error(ErrorCode::kIo, "cannot resolve " + host + " (" + ec.message() + "); check --host");
  const tcp::endpoint endpoint = results.begin()->endpoint();
  auto& a = impl_->acceptor;
  a.open(endpoint.protocol(), ec);
  if (!ec) a.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(endpoint, ec);
  if (!ec) a.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    throw Error(ErrorCode::kIo,
                "cannot listen on " + host + ":" + std::to_string(port) + " (" + ec.message() + "); pick another --port or --host");
  }
  return a.local_endpoint().port();
}

bool HttpServer::run(std::chrono::milliseconds drain) {
  impl_->accept();
  impl_->drain_timeout = drain;
  impl_->ioc.run();
  return impl_->in_flight == 0;
}

void HttpServer::stop() {
  net::post(impl_->ioc, [impl = impl_] {
    if (impl->stopping) return;
    impl->stopping = true;
    beast::error_code ec;
    impl->acceptor.close(ec);
    bool any = false;
    for (const auto& w : impl->sessions) {
      if (auto s = w.lock()) {
        if (s->handling())
          any = true;
        else
          s->close();  // idle, or a request still arriving: dropped now
      }
    }
    if (!any) return;  // the I/O loop ends as the closed sessions go
    impl->drain_timer.expires_after(impl->drain_timeout);
    impl->drain_timer.async_wait([impl](beast::error_code e) {
      if (e) return;
      // Requests still running after the drain time are abandoned: each is answered 503, given a
      // few seconds to be written, then the loop ends without waiting for their handlers.
      for (const auto& w : impl->sessions) {
        if (auto s = w.lock(); s && s->give_up()) ++impl->goodbyes;
      }
      if (impl->goodbyes == 0) return impl->ioc.stop();
      impl->drain_timer.expires_after(std::min(impl->limits.write_timeout, std::chrono::milliseconds(5'000)));
      impl->drain_timer.async_wait([impl](beast::error_code) { impl->ioc.stop(); });
    });
  });
}

}  // namespace sam3::server
