#include "hub/http_download.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <unistd.h>

#include "sam3/log.h"

namespace sam3::hub {
namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string trim_quotes(std::string v) {
  while (!v.empty() && (std::isspace(static_cast<unsigned char>(v.back())) || v.back() == '"')) v.pop_back();
  size_t b = 0;
  while (b < v.size() && (std::isspace(static_cast<unsigned char>(v[b])) || v[b] == '"')) ++b;
  if (v.compare(b, 2, "W/") == 0) b += 2;
  while (b < v.size() && v[b] == '"') ++b;
  return v.substr(b);
}

bool is_hex(const std::string& s, size_t n) {
  return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

// State of one attempt, filled by libcurl callbacks.
struct Transfer {
  FILE* file = nullptr;
  std::int64_t offset = 0;   // bytes already on disk when this attempt started
  std::int64_t written = 0;  // bytes written by this attempt
  long status = 0;           // of the response being received
  bool truncated = false;    // server ignored Range: restarted from zero
  std::string error_code, error_message;
  Announced announced;
  std::int64_t content_length = -1;
  std::int64_t max_bytes = 0;  // cap on the file when no size is announced
  bool too_long = false;       // the body went past the announced size or the cap
  const std::function<void(std::int64_t, std::int64_t)>* progress = nullptr;
};

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {
    const auto space = line.find(' ');
    t->status = space == std::string::npos ? 0 : std::strtol(line.c_str() + space + 1, nullptr, 10);
    t->content_length = -1;
    return size * count;
  }
  const auto colon = line.find(':');
  if (colon == std::string::npos) return size * count;
  std::string key = line.substr(0, colon);
  std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string value = trim_quotes(line.substr(colon + 1));
  if (key == "x-linked-etag" && is_hex(value, 64))
    t->announced.sha256 = value;
  else if (key == "x-linked-size")
    t->announced.size = std::strtoll(value.c_str(), nullptr, 10);
  else if (key == "etag" && is_hex(value, 64) && t->announced.sha256.empty())
    t->announced.sha256 = value;
  else if (key == "etag" && is_hex(value, 40))
    t->announced.git_sha1 = value;
  else if (key == "x-error-code")
    t->error_code = value;
  else if (key == "x-error-message")
    t->error_message = value;
  else if (key == "content-length")
    t->content_length = std::strtoll(value.c_str(), nullptr, 10);
  else if (key == "content-range") {
    const auto slash = value.rfind('/');
    if (slash != std::string::npos && value[slash + 1] != '*' && t->announced.size < 0) {
      t->announced.size = std::strtoll(value.c_str() + slash + 1, nullptr, 10);
    }
  }
  return size * count;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  if (t->status >= 300) return size * count;  // error bodies are not file content
  if (t->status == 200 && t->offset > 0 && t->written == 0 && !t->truncated) {
    // The server sent the whole file instead of the requested range: start over.
    if (std::fflush(t->file) != 0 || ::ftruncate(fileno(t->file), 0) != 0) return 0;
    std::rewind(t->file);
    t->offset = 0;
    t->truncated = true;
  }
  // Never more than was announced (an endless or padded body must not fill the disk).
  const std::int64_t announced = t->announced.size >= 0 ? t->announced.size : t->content_length >= 0 ? t->offset + t->content_length : -1;
  const std::int64_t limit = announced >= 0 ? announced : t->max_bytes;
  if (t->offset + t->written + static_cast<std::int64_t>(size * count) > limit) {
    t->too_long = true;
    return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
  }
  const size_t n = std::fwrite(data, size, count, t->file);
  t->written += static_cast<std::int64_t>(n * size);
  return n * size;
}

int on_progress(void* user, curl_off_t total, curl_off_t now, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (t->progress && *t->progress && t->status < 300) {
    const std::int64_t full = t->announced.size > 0 ? t->announced.size : (total > 0 ? t->offset + total : 0);
    (*t->progress)(t->offset + now, full);
  }
  return 0;
}

bool retryable(CURLcode code) {
  switch (code) {
    // Not retried: CURLE_COULDNT_RESOLVE_HOST / CURLE_COULDNT_CONNECT (offline is not transient).
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_GOT_NOTHING:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

std::string hub_detail(const Transfer& t) {
  std::string d;
  if (!t.error_code.empty()) d += " [" + t.error_code + "]";
  if (!t.error_message.empty()) d += " " + t.error_message;
  return d;
}

}  // namespace

DownloadOutcome download_to_part(const DownloadRequest& request, const std::filesystem::path& part,
                                 const std::function<void(std::int64_t, std::int64_t)>& progress) {
  global_init();
  DownloadOutcome outcome;
  double delay = request.first_retry_delay_s;
  for (int attempt = 1; attempt <= request.max_attempts; ++attempt) {
    std::error_code ec;
    const std::int64_t have = std::filesystem::exists(part, ec) ? static_cast<std::int64_t>(std::filesystem::file_size(part, ec)) : 0;
    FILE* file = std::fopen(part.c_str(), "ab");
    if (!file) {
      outcome.failure = FailureKind::kOther;
      outcome.message = part.string() + ": cannot write the download";
      return outcome;
    }
    Transfer t;
    t.file = file;
    t.offset = have;
    t.max_bytes = request.max_bytes;
    t.progress = &progress;
    CURL* curl = curl_easy_init();
    curl_slist* headers = nullptr;
    if (!request.token.empty()) headers = curl_slist_append(headers, ("Authorization: Bearer " + request.token).c_str());
    headers = curl_slist_append(headers, "User-Agent: sam3cpp");
    curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 30L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, request.low_speed_timeout_s);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    if (have > 0) curl_easy_setopt(curl, CURLOPT_RANGE, (std::to_string(have) + "-").c_str());
    const CURLcode code = curl_easy_perform(curl);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    std::fclose(file);

    if (t.announced.sha256.size()) outcome.announced.sha256 = t.announced.sha256;
    if (t.announced.git_sha1.size()) outcome.announced.git_sha1 = t.announced.git_sha1;
    if (t.announced.size >= 0) outcome.announced.size = t.announced.size;
    const std::int64_t on_disk = t.offset + t.written;
    if (outcome.announced.size < 0 && t.content_length >= 0 && code == CURLE_OK) outcome.announced.size = on_disk;

    if (t.too_long) {
      outcome.failure = FailureKind::kTooLong;
      outcome.message = "the hub sent more than the " +
                        std::to_string(outcome.announced.size >= 0 ? outcome.announced.size : request.max_bytes) + " bytes " +
                        (outcome.announced.size >= 0 ? "it announced" : "a file may have");
      return outcome;
    }
    if (code == CURLE_OK && (t.status == 200 || t.status == 206)) {
      outcome.failure = FailureKind::kNone;
      return outcome;
    }
    if (code == CURLE_OK && t.status == 416) {
      // The part already holds everything (or more): let the caller verify it.
      outcome.failure = FailureKind::kNone;
      return outcome;
    }
    if (code == CURLE_OK && (t.status == 401 || t.status == 403)) {
      outcome.failure = FailureKind::kUnauthorized;
      outcome.message = "HTTP " + std::to_string(t.status) + hub_detail(t);
      return outcome;
    }
    if (code == CURLE_OK && t.status == 404) {
      outcome.failure = FailureKind::kNotFound;
      outcome.message = "HTTP 404" + hub_detail(t);
      return outcome;
    }
    const bool server_busy = code == CURLE_OK && (t.status >= 500 || t.status == 429);
    if (code != CURLE_OK) {
      outcome.failure =
          (code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_CONNECT) ? FailureKind::kUnreachable : FailureKind::kServer;
      outcome.message = curl_easy_strerror(code);
    } else {
      outcome.failure = server_busy ? FailureKind::kServer : FailureKind::kOther;
      outcome.message = "HTTP " + std::to_string(t.status) + hub_detail(t);
    }
    if (!(server_busy || retryable(code)) || attempt == request.max_attempts) return outcome;
    log(LogLevel::kWarning, request.url + ": " + outcome.message + "; retrying in " + std::to_string(static_cast<int>(delay * 1000)) +
                                " ms (" + std::to_string(on_disk) + " bytes kept)");
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    delay *= 2;
  }
  return outcome;
}

}  // namespace sam3::hub
