// The HTTP request and response the routes see, independent of the transport.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sam3::server {

struct HttpRequest {
  std::string method;  // as sent ("GET", "POST", ...)
  std::string target;  // as sent, with the query
  std::string path;    // target without the query
  std::string query;
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  std::string body;
  std::string peer;  // the client's address ("127.0.0.1", "::1"); empty when unknown
  int version = 11;  // HTTP/1.0: 10, HTTP/1.1: 11
  // True once the client has closed its connection (work for it can be dropped).
  std::function<bool()> client_gone = [] { return false; };
  // When its headers arrived: a request's time limit counts from here, across everything it does.
  std::chrono::steady_clock::time_point received = std::chrono::steady_clock::now();

  const std::string* find_header(std::string_view name) const;  // name in lower case
  std::string header(std::string_view name) const;              // "" when absent
  // The Content-Type's media type in lower case, without parameters ("application/json").
  std::string media_type() const;
  // A parameter of a header value, e.g. header_param("content-type", "boundary").
  std::string header_param(std::string_view name, std::string_view param) const;
};

// A response body read piece by piece while it is sent (a file), so that what a response holds
// in memory is one piece, whatever the body's size and however slowly the client reads.
class BodySource {
 public:
  virtual ~BodySource() = default;
  virtual std::uint64_t size() const = 0;  // the bytes it gives in all (the Content-Length)
  // Up to `n` of the next bytes into `buffer`; how many (0: none are left, or they cannot be
  // read: the transport then ends the connection, the length it announced being unmet).
  virtual std::size_t read(char* buffer, std::size_t n) = 0;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::shared_ptr<BodySource> source;  // when set, the body is read from it instead of `body`
  std::vector<std::pair<std::string, std::string>> headers;
  bool close = false;  // close the connection after this response
};

std::string to_lower(std::string_view s);
std::string_view trim(std::string_view s);  // spaces and tabs at both ends
// A parameter of a header value: header_parameter("form-data; name=\"image\"", "name") is "image".
std::string header_parameter(std::string_view header, std::string_view key);

}  // namespace sam3::server
