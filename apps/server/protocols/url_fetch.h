// One HTTP(S) GET or POST into memory with libcurl, for task images and token exchanges:
// redirects followed here, hop by hop, so that each one is checked by the caller's policy
// and credentials go to one origin only; a size cap and a deadline on the whole transfer.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace sam3::server {

// "scheme://host:port" with the default port made explicit, lower case; "" if not http(s).
std::string url_origin(const std::string& url);

struct FetchRequest {
  std::string url;
  std::string post_json;  // sent as a POST body when not empty
  // Headers sent only to hops on `credentials_origin` (never after a redirect elsewhere).
  std::vector<std::string> credentials;
  std::string credentials_origin;
  // Whether a redirect from `from` to `to` may be followed (both absolute URLs).
  std::function<bool(const std::string& from, const std::string& to)> may_redirect;
  std::int64_t max_bytes = std::int64_t{64} << 20;
  long timeout_s = 30;
  // The transfer also ends at `deadline` (the request's own) and as soon as `given_up` says so
  // (its client left): checked at least about once a second, whether bytes flow or not.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::function<bool()> given_up;
  int max_redirects = 5;
};

struct FetchResponse {
  long status = 0;
  std::string body;
  std::string url;  // of the last hop
};

// Whether `value` is visible ASCII only (no space, no control character): what a token in an
// Authorization header may be.
bool is_header_token(const std::string& value);

struct FetchError : std::runtime_error {
  enum Kind { kUnreachable, kTooLarge, kRedirectRefused, kTooManyRedirects, kTimedOut, kDeadline, kGivenUp };
  FetchError(Kind kind, const std::string& message) : std::runtime_error(message), kind(kind) {}
  Kind kind;
};

// Any HTTP status is returned; transport failures and refused redirects throw FetchError.
FetchResponse fetch_url(const FetchRequest& request);

}  // namespace sam3::server
