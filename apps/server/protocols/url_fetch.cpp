#include "url_fetch.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>

#include <memory>
#include <mutex>

#include "http/http_message.h"

namespace sam3::server {
namespace {

struct Sink {
  std::string body;
  std::int64_t max_bytes = 0;
  bool too_large = false;
  const std::function<bool()>* given_up = nullptr;
  bool stopped = false;
};

// libcurl calls this often (also while waiting for a connection or a byte): a nonzero answer
// aborts the transfer.
int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* sink = static_cast<Sink*>(user);
  if (*sink->given_up && (*sink->given_up)()) sink->stopped = true;
  return sink->stopped ? 1 : 0;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  if (static_cast<std::int64_t>(sink->body.size() + size * count) > sink->max_bytes) {
    sink->too_large = true;
    return 0;  // aborts the transfer
  }
  sink->body.append(data, size * count);
  return size * count;
}

std::string part_of(CURLU* url, CURLUPart part, unsigned flags = 0) {
  char* value = nullptr;
  if (curl_url_get(url, part, &value, flags) != CURLUE_OK || !value) return "";
  std::string s(value);
  curl_free(value);
  return s;
}

}  // namespace

bool is_header_token(const std::string& value) {
  return std::all_of(value.begin(), value.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

std::string url_origin(const std::string& url) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> u(curl_url(), curl_url_cleanup);
  if (curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return "";
  const std::string scheme = to_lower(part_of(u.get(), CURLUPART_SCHEME));
  if (scheme != "http" && scheme != "https") return "";
  return scheme + "://" + to_lower(part_of(u.get(), CURLUPART_HOST)) + ":" + part_of(u.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT);
}

FetchResponse fetch_url(const FetchRequest& request) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  const auto own_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(request.timeout_s);
  const bool request_deadline_first = request.deadline < own_deadline;
  const auto deadline = request_deadline_first ? request.deadline : own_deadline;
  const auto timed_out = [&] {
    return request_deadline_first
               ? FetchError(FetchError::kDeadline, "the request's time ran out")
               : FetchError(FetchError::kTimedOut, "no answer within " + std::to_string(request.timeout_s) + " s (--fetch-timeout)");
  };
  std::string url = request.url;
  for (int hop = 0;; ++hop) {
    if (url_origin(url).empty()) throw FetchError(FetchError::kRedirectRefused, "only http and https URLs are fetched, not " + url);
    std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
    Sink sink;
    sink.max_bytes = request.max_bytes;
    sink.given_up = &request.given_up;
    curl_slist* headers = nullptr;
    if (url_origin(url) == request.credentials_origin) {
      for (const auto& h : request.credentials) {
        // libcurl sends a header as given: a line break in one (a token from a client, or
        // Label Studio's answer) would add headers of someone else's choosing. Never sent.
        if (h.find_first_of(std::string("\r\n\0", 3)) != std::string::npos) {
          curl_slist_free_all(headers);
          throw FetchError(FetchError::kUnreachable, "a credential holds a line break; it was not sent");
        }
        headers = curl_slist_append(headers, h.c_str());
      }
    }
    if (!request.post_json.empty()) headers = curl_slist_append(headers, "Content-Type: application/json");
    std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> header_list(headers, curl_slist_free_all);
    const long left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left_ms <= 0) throw timed_out();
    curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl.get(), CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl.get(), CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, left_ms);
    curl_easy_setopt(curl.get(), CURLOPT_CONNECTTIMEOUT_MS, std::min(left_ms, 10'000L));
    curl_easy_setopt(curl.get(), CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(request.max_bytes));
    curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl.get(), CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl.get(), CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(curl.get(), CURLOPT_XFERINFODATA, &sink);
    curl_easy_setopt(curl.get(), CURLOPT_USERAGENT, "sam3cpp");
    if (!request.post_json.empty()) {
      curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDS, request.post_json.c_str());
      curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.post_json.size()));
    }
    const CURLcode rc = curl_easy_perform(curl.get());
    if (sink.too_large || rc == CURLE_FILESIZE_EXCEEDED) {
      throw FetchError(FetchError::kTooLarge, "the answer is larger than " + std::to_string(request.max_bytes) + " bytes");
    }
    if (sink.stopped) throw FetchError(FetchError::kGivenUp, "the client left before the image arrived");
    if (rc == CURLE_OPERATION_TIMEDOUT) throw timed_out();
    if (rc != CURLE_OK) throw FetchError(FetchError::kUnreachable, curl_easy_strerror(rc));
    FetchResponse response;
    curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &response.status);
    char* location = nullptr;
    curl_easy_getinfo(curl.get(), CURLINFO_REDIRECT_URL, &location);
    if (response.status >= 300 && response.status < 400 && location) {
      const std::string next(location);
      if (hop >= request.max_redirects) {
        throw FetchError(FetchError::kTooManyRedirects, "more than " + std::to_string(request.max_redirects) + " redirects");
      }
      if (!request.may_redirect || !request.may_redirect(url, next)) {
        throw FetchError(FetchError::kRedirectRefused, "a redirect to " + url_origin(next) + " was not followed");
      }
      url = next;
      continue;
    }
    response.body = std::move(sink.body);
    response.url = url;
    return response;
  }
}

}  // namespace sam3::server
