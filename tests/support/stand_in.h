// Loopback stand-ins for the hosts sam3 serve talks to (Label Studio, image hosts, a host
// that never answers), recording what they were sent.
#pragma once

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sam3::test {

// A loopback HTTP server on a free port, recording what it was sent.
class StandIn {
 public:
  struct Seen {
    std::string path, authorization;
    httplib::Headers headers;
  };
  StandIn() { port_ = server_.bind_to_any_port("127.0.0.1"); }
  ~StandIn() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  void start() {
    // Recorded before the route answers (a logger runs after the answer is sent, so a client
    // could look before its request was recorded).
    server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response&) {
      std::lock_guard lock(mutex_);
      seen_.push_back({req.path, req.get_header_value("Authorization"), req.headers});
      return httplib::Server::HandlerResponse::Unhandled;
    });
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 100 && !server_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  httplib::Server& http() { return server_; }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<Seen> seen() {
    std::lock_guard lock(mutex_);
    return seen_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<Seen> seen_;
  int port_ = 0;
};

// A host that takes connections and never answers: the kernel completes them in the listen
// backlog, nobody reads or writes.
class BlackHole {
 public:
  BlackHole() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(fd_, 128);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~BlackHole() { ::close(fd_); }
  BlackHole(const BlackHole&) = delete;
  BlackHole& operator=(const BlackHole&) = delete;
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace sam3::test
