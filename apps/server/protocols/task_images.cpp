#include "task_images.h"

#include <curl/curl.h>

#include <nlohmann/json.hpp>

#include "api_error.h"
#include "sam3/base64.h"
#include "request_json.h"
#include "http/http_message.h"
#include "sam3/error.h"
#include "sam3/image.h"
#include "url_fetch.h"

namespace sam3::server {
namespace {

constexpr const char* kSetKey = "set LABEL_STUDIO_API_KEY (or --label-studio-api-key) to a token from Label Studio's Account & Settings";

std::string url_decode(const std::string& s) {
  int n = 0;
  char* out = curl_easy_unescape(nullptr, s.c_str(), static_cast<int>(s.size()), &n);
  if (!out) return "";
  std::string decoded(out, static_cast<size_t>(n));
  curl_free(out);
  return decoded;
}

std::string query_value(const std::string& ref, const std::string& key) {
  const size_t q = ref.find('?');
  if (q == std::string::npos) return "";
  size_t start = q + 1;
  while (start < ref.size()) {
    const size_t end = std::min(ref.find('&', start), ref.size());
    const std::string pair = ref.substr(start, end - start);
    if (pair.starts_with(key + "=")) return url_decode(pair.substr(key.size() + 1));
    start = end + 1;
  }
  return "";
}

std::string base64url(const std::string& s) {
  std::string b = base64_encode(s);
  for (char& c : b) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return b;  // padding kept, as Python's urlsafe_b64encode
}

// A personal access token is a JWT (three base64url parts); a legacy token is hex.
bool is_personal_access_token(const std::string& key) { return key.starts_with("eyJ") && std::count(key.begin(), key.end(), '.') == 2; }

// A fetch cut short by its request (client gone, the request's time up) is that request's end.
void throw_if_request_ended(const FetchError& e) {
  if (e.kind == FetchError::kGivenUp) throw ApiError(499, "client_closed", "the client closed the connection");
  if (e.kind == FetchError::kDeadline) {
    throw ApiError(503, "timeout", std::string("fetching the task's image: ") + e.what() + " (sam3 serve --timeout)");
  }
}

std::string without_trailing_slash(std::string url) {
  while (url.ends_with("/")) url.pop_back();
  return url;
}

}  // namespace

// Enough for every project of a Label Studio; a flood of /setup calls forgets the oldest.
constexpr size_t kMaxProjects = 1024;

void TaskImages::remember_setup(const std::string& project, const std::string& hostname, const std::string& access_token) {
  // A token is one header value: a line break in it would add headers (or a second request) of
  // the client's choosing to what is sent to Label Studio. Tokens are visible ASCII.
  if (!is_header_token(access_token)) {
    throw ApiError(400, "invalid_request", "the access_token holds a space, line break or other character no token has");
  }
  std::lock_guard lock(mutex_);
  SetupPair pair;
  if (!hostname.empty() && !url_origin(hostname).empty()) pair.url = without_trailing_slash(hostname);
  if (!pair.url.empty()) pair.token = access_token;  // a token without its host is never used
  if (setups_.size() >= kMaxProjects && !setups_.contains(project)) setups_.erase(setups_.begin());
  setups_[project] = pair;
  last_setup_project_ = project;
}

TaskImages::Credentials TaskImages::credentials(const std::string& project) {
  std::lock_guard lock(mutex_);
  // The /setup of this project; a /predict that names none takes the latest /setup's.
  auto it = setups_.find(project.empty() ? last_setup_project_ : project);
  const SetupPair setup = it == setups_.end() ? SetupPair{} : it->second;
  Credentials c;
  if (!options_.url.empty()) {
    c.url = without_trailing_slash(options_.url);
    c.origin = url_origin(c.url);
    if (!options_.api_key.empty()) {
      c.key = options_.api_key;
    } else if (url_origin(setup.url) == c.origin) {
      c.key = setup.token;  // /setup's token, for the host it came with, which is the configured one
    }
  } else {
    // No configured address: /setup's host with /setup's own token; the operator's key, if
    // any, stays here (it goes only to LABEL_STUDIO_URL).
    c.url = setup.url;
    c.origin = url_origin(c.url);
    c.key = setup.token;
  }
  return c;
}

void TaskImages::limit(FetchRequest& request, const FetchBudget& budget) const {
  request.timeout_s = options_.fetch_timeout_s;
  request.deadline = budget.deadline;
  request.given_up = budget.given_up;
}

std::string TaskImages::authorization(const Credentials& c, bool renew, const FetchBudget& budget) {
  if (c.key.empty()) return "";
  if (!is_personal_access_token(c.key)) return "Authorization: Token " + c.key;
  // An access token is Label Studio's answer for this key at this origin: it goes back there only.
  const std::string cache_key = c.origin + " " + c.key;
  {
    std::lock_guard lock(mutex_);
    if (auto it = access_tokens_.find(cache_key); !renew && it != access_tokens_.end()) return "Authorization: Bearer " + it->second;
  }
  FetchRequest exchange;
  exchange.url = c.url + "/api/token/refresh/";
  exchange.post_json = nlohmann::json{{"refresh", c.key}}.dump();
  limit(exchange, budget);
  exchange.max_bytes = 1 << 20;
  FetchResponse r;
  try {
    r = fetch_url(exchange);
  } catch (const FetchError& e) {
    throw_if_request_ended(e);
    throw ApiError(502, "label_studio_unreachable",
                   "cannot reach Label Studio at " + c.url +
                       " to exchange the personal "
                       "access token: " +
                       e.what() + "; check LABEL_STUDIO_URL");
  }
  nlohmann::json body;
  try {
    body = parse_request_json<nlohmann::json>(r.body);  // a host /setup named may answer anything
  } catch (const ApiError&) {
    body = nlohmann::json::value_t::discarded;
  }
  if (r.status != 200 || !body.is_object() || !body.contains("access") || !body["access"].is_string()) {
    throw ApiError(502, "label_studio_unauthorized",
                   "Label Studio did not accept the personal access token (POST /api/token/refresh/ answered HTTP " +
                       std::to_string(r.status) + "); " + kSetKey);
  }
  std::lock_guard lock(mutex_);
  if (access_tokens_.size() >= kMaxProjects) access_tokens_.clear();
  const std::string access = body["access"].get<std::string>();
  access_tokens_[cache_key] = access;
  return "Authorization: Bearer " + access;
}

bool TaskImages::host_allowed(const std::string& url) const {
  const std::string origin = url_origin(url);
  const std::string host_port = origin.substr(origin.find("://") + 3);
  const std::string host = host_port.substr(0, host_port.rfind(':'));
  for (const auto& h : options_.fetch_hosts) {
    const std::string allowed = to_lower(h);
    if (allowed == "*" || allowed == host || allowed == host_port) return true;
  }
  return false;
}

std::string TaskImages::fetch_from_label_studio(const std::string& url, const std::string& ref, const Credentials& c,
                                                const FetchBudget& budget) {
  for (int attempt = 0;; ++attempt) {
    FetchRequest request;
    request.url = url;
    const std::string auth = authorization(c, attempt > 0, budget);
    if (!auth.empty()) request.credentials = {auth};
    request.credentials_origin = c.origin;
    // Label Studio's redirects (presigned cloud URLs, storage proxies) are followed without
    // the token; a redirect from elsewhere only to hosts the user allowed.
    request.may_redirect = [this, &c](const std::string& from, const std::string& to) {
      return url_origin(from) == c.origin || url_origin(to) == c.origin || host_allowed(to);
    };
    request.max_bytes = options_.max_image_bytes;
    limit(request, budget);
    FetchResponse r;
    try {
      r = fetch_url(request);
    } catch (const FetchError& e) {
      throw_if_request_ended(e);
      if (e.kind == FetchError::kUnreachable || e.kind == FetchError::kTimedOut) {
        throw ApiError(
            502, "label_studio_unreachable",
            "cannot fetch " + ref + " from Label Studio at " + c.url + ": " + e.what() + "; check LABEL_STUDIO_URL (--label-studio-url)");
      }
      throw ApiError(502, "image_fetch_failed", "cannot fetch " + ref + ": " + e.what());
    }
    if (r.status == 200) return std::move(r.body);
    if ((r.status == 401 || r.status == 403) && attempt == 0 && is_personal_access_token(c.key)) continue;
    if (r.status == 401 || r.status == 403) {
      const bool key_kept_home = c.key.empty() && !options_.api_key.empty();  // configured, but not for this host
      throw ApiError(502, "label_studio_unauthorized",
                     "Label Studio refused " + std::string(c.key.empty() ? "a request without a token" : "the API key") + " (HTTP " +
                         std::to_string(r.status) + ") for " + ref + "; " +
                         (key_kept_home ? "LABEL_STUDIO_API_KEY is sent only to LABEL_STUDIO_URL (--label-studio-url): "
                                          "set that to " +
                                              c.url
                                        : kSetKey));
    }
    throw ApiError(
        502, "image_fetch_failed",
        "fetching " + ref + " answered HTTP " + std::to_string(r.status) + (url_origin(r.url) == c.origin ? " from Label Studio" : ""));
  }
}

std::string TaskImages::fetch_other(const std::string& url, const FetchBudget& budget) {
  if (!host_allowed(url)) {
    throw ApiError(403, "fetch_refused",
                   "the task's image " + url +
                       " is on a host sam3 does not fetch from; allow it "
                       "with --fetch-host " +
                       url_origin(url).substr(url_origin(url).find("://") + 3));
  }
  FetchRequest request;
  request.url = url;
  request.may_redirect = [this](const std::string&, const std::string& to) { return host_allowed(to); };
  request.max_bytes = options_.max_image_bytes;
  limit(request, budget);
  try {
    FetchResponse r = fetch_url(request);
    if (r.status == 200) return std::move(r.body);
    throw ApiError(502, "image_fetch_failed", "fetching " + url + " answered HTTP " + std::to_string(r.status));
  } catch (const FetchError& e) {
    throw_if_request_ended(e);
    throw ApiError(
        e.kind == FetchError::kRedirectRefused ? 403 : 502, "image_fetch_failed",
        "cannot fetch " + url + ": " + e.what() + (e.kind == FetchError::kRedirectRefused ? " (allow its host with --fetch-host)" : ""));
  }
}

std::string TaskImages::read_local_file(const std::string& relative, const std::string& ref) {
  namespace fs = std::filesystem;
  const fs::path rel(relative);
  bool escapes = relative.empty() || rel.is_absolute();
  for (const auto& part : rel) escapes = escapes || part == "..";
  if (escapes) throw ApiError(400, "invalid_task", "the local file " + ref + " is not a path inside the document root");
  std::error_code ec;
  const fs::path root = fs::canonical(options_.local_files_root, ec);
  if (ec) {
    throw ApiError(500, "local_files_root_missing",
                   "LOCAL_FILES_DOCUMENT_ROOT (--local-files-root) is not a folder: " + options_.local_files_root.string());
  }
  const fs::path path = fs::weakly_canonical(root / rel, ec);
  if (ec || path.string().rfind(root.string() + "/", 0) != 0) {
    throw ApiError(400, "invalid_task", "the local file " + ref + " is not inside the document root");
  }
  ImageLoadOptions limits;
  limits.max_file_bytes = options_.max_image_bytes;
  try {
    const auto bytes = read_image_file(path, limits);
    return std::string(bytes.begin(), bytes.end());
  } catch (const Error& e) {
    throw ApiError(404, "image_not_found",
                   "cannot read the local file " + relative +
                       " under LOCAL_FILES_DOCUMENT_ROOT: " + (e.code() == ErrorCode::kImageTooLarge ? "it is too large" : "no such file"));
  }
}

// Holds one of the max_fetches places for a fetch in flight, or refuses at once: fetches that
// wait on a slow host must leave handler threads for everyone else.
struct TaskImages::Slot {
  explicit Slot(TaskImages& images) : images(images) {
    std::lock_guard lock(images.mutex_);
    if (images.fetches_in_flight_ >= images.options_.max_fetches) {
      throw ApiError(503, "busy_fetching",
                     std::to_string(images.options_.max_fetches) +
                         " task images are being "
                         "fetched already (--max-fetches); retry shortly");
    }
    ++images.fetches_in_flight_;
  }
  ~Slot() {
    std::lock_guard lock(images.mutex_);
    --images.fetches_in_flight_;
  }
  TaskImages& images;
};

std::string TaskImages::fetch(const std::string& ref, std::int64_t task_id, const std::string& project, const FetchBudget& budget) {
  if (ref.starts_with("data:")) {
    auto bytes = base64_decode(ref);
    if (!bytes) throw ApiError(400, "invalid_task", "task " + std::to_string(task_id) + "'s data: URI is not valid base64");
    return std::move(*bytes);
  }
  if (ref.starts_with("/data/local-files/") && !options_.local_files_root.empty()) {
    return read_local_file(query_value(ref, "d"), ref);
  }
  const Credentials c = credentials(project);
  const bool relative = ref.starts_with("/");
  const size_t scheme_end = ref.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : to_lower(ref.substr(0, scheme_end));
  const bool cloud = scheme == "s3" || scheme == "gs" || scheme == "azure-blob" || scheme == "azure-spi";
  if ((relative || cloud) && c.origin.empty()) {
    throw ApiError(500, "label_studio_url_missing",
                   "task " + std::to_string(task_id) + "'s image " + ref +
                       " is stored in Label Studio, and sam3 serve "
                       "does not know Label Studio's address; start it with --label-studio-url http://HOST:8080 (or set "
                       "LABEL_STUDIO_URL) and --label-studio-api-key (LABEL_STUDIO_API_KEY)");
  }
  if (!relative && !cloud && scheme != "http" && scheme != "https") {
    throw ApiError(400, "invalid_task",
                   "task " + std::to_string(task_id) + "'s image \"" + ref.substr(0, 200) +
                       "\" is neither a URL, a Label Studio path nor a data: URI");
  }
  const Slot slot(*this);
  if (relative) return fetch_from_label_studio(c.url + ref, ref, c, budget);
  if (cloud) {
    return fetch_from_label_studio(c.url + "/tasks/" + std::to_string(task_id) + "/presign/?fileuri=" + base64url(ref), ref, c, budget);
  }
  return url_origin(ref) == c.origin ? fetch_from_label_studio(ref, ref, c, budget) : fetch_other(ref, budget);
}

}  // namespace sam3::server
