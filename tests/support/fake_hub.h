// A local HTTP server that behaves like the Hugging Face hub for downloads: resolve URLs
// that redirect LFS files to a CDN path with X-Linked-Etag/X-Linked-Size, small files served
// directly with a git-blob ETag, Range, gated repositories, error codes, and injected faults.
#pragma once

#include <httplib.h>
#include <openssl/evp.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sam3::test {

inline std::string digest_hex(const EVP_MD* md, const std::string& data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  EVP_Digest(data.data(), data.size(), out, &n, md, nullptr);
  std::string s;
  for (unsigned i = 0; i < n; ++i) {
    static const char* d = "0123456789abcdef";
    s += d[out[i] >> 4];
    s += d[out[i] & 15];
  }
  return s;
}

class FakeHub {
 public:
  struct Request {
    std::string path, range, authorization;
  };

  FakeHub() {
    server_.Get(R"(/(.+)/resolve/([^/]+)/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      record(req);
      const std::string key = req.matches[1].str() + "/" + req.matches[3].str();
      if (!token.empty() && req.get_header_value("Authorization") != "Bearer " + token) {
        res.status = 401;
        res.set_header("X-Error-Code", "GatedRepo");
        res.set_header("X-Error-Message", "Access to this model is restricted.");
        return;
      }
      if (fail_with_503 > 0) {
        --fail_with_503;
        res.status = 503;
        return;
      }
      if (html_pages > 0) {  // a login wall or proxy page, 200 and no checksum
        --html_pages;
        res.set_content("<!DOCTYPE html><html><body>Please sign in</body></html>", "text/html");
        return;
      }
      std::lock_guard lock(mutex_);
      auto it = files_.find(key);
      if (it == files_.end()) {
        res.status = 404;
        res.set_header("X-Error-Code", "EntryNotFound");
        res.set_header("X-Error-Message", "Entry not found");
        return;
      }
      const std::string& content = it->second;
      if (key.ends_with(".json")) {  // small files live in git: served directly
        res.set_header("ETag",
                       "\"" + digest_hex(EVP_sha1(), "blob " + std::to_string(content.size()) + std::string(1, '\0') + content) + "\"");
        res.set_content(content, "application/json");
        return;
      }
      const std::string sha = digest_hex(EVP_sha256(), content);
      res.status = 302;
      // The CDN is another host name for the same server, as on the real hub.
      res.set_header("Location", "http://localhost:" + std::to_string(port_) + "/cdn/" + sha);
      res.set_header("X-Linked-Etag", "\"" + sha + "\"");
      res.set_header("X-Linked-Size", std::to_string(content.size()));
    });
    server_.Get(R"(/cdn/([0-9a-f]+))", [this](const httplib::Request& req, httplib::Response& res) {
      record(req);
      std::string content;
      {
        std::lock_guard lock(mutex_);
        for (const auto& [k, v] : files_) {
          if (digest_hex(EVP_sha256(), v) == req.matches[1].str()) content = v;
        }
        ++cdn_hits_[req.matches[1].str()];
      }
      if (corrupt_responses > 0) {
        --corrupt_responses;
        content[content.size() / 2] ^= 0x55;
      }
      if (const int drop = drop_after_bytes.exchange(-1); drop >= 0) {
        // Announce the whole body, send part of it, then cut the connection.
        res.set_content_provider(content.size(), "application/octet-stream",
                                 [content, drop](size_t offset, size_t, httplib::DataSink& sink) {
                                   if (offset >= static_cast<size_t>(drop)) return false;
                                   sink.write(content.data() + offset, static_cast<size_t>(drop) - offset);
                                   return true;
                                 });
        return;
      }
      if (endless_bodies > 0) {  // keeps sending past the announced size, chunked, for ever
        --endless_bodies;
        res.set_chunked_content_provider("application/octet-stream", [](size_t, httplib::DataSink& sink) {
          static const std::string block(65536, 'x');
          return sink.write(block.data(), block.size());
        });
        return;
      }
      if (slow_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms));
      res.set_content(content, "application/octet-stream");  // httplib answers Range with 206
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  ~FakeHub() {
    server_.stop();
    thread_.join();
  }

  void add(const std::string& repo, const std::string& path, std::string content) {
    std::lock_guard lock(mutex_);
    files_[repo + "/" + path] = std::move(content);
  }

  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

  std::vector<Request> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }

  int cdn_hits(const std::string& content) {
    std::lock_guard lock(mutex_);
    return cdn_hits_[digest_hex(EVP_sha256(), content)];
  }

  std::string token;                      // when set, requests need "Bearer <token>"
  std::atomic<int> fail_with_503{0};      // the next N resolve requests answer 503
  std::atomic<int> corrupt_responses{0};  // the next N CDN bodies have a flipped byte
  std::atomic<int> drop_after_bytes{-1};  // the next CDN body stops after N bytes
  std::atomic<int> slow_ms{0};            // delay before each CDN body
  std::atomic<int> html_pages{0};         // the next N resolve requests answer an HTML page
  std::atomic<int> endless_bodies{0};     // the next N CDN bodies never end

 private:
  void record(const httplib::Request& req) {
    std::lock_guard lock(mutex_);
    requests_.push_back({req.path, req.get_header_value("Range"), req.get_header_value("Authorization")});
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mutex_;
  std::map<std::string, std::string> files_;
  std::map<std::string, int> cdn_hits_;
  std::vector<Request> requests_;
};

}  // namespace sam3::test
