// The image bytes a Label Studio task names, fetched as Label Studio's own ML backend SDK
// does: relative URLs (/data/upload/..., /data/local-files/?d=...) from Label Studio with its
// token, cloud URIs (s3://, gs://, azure-blob://) through its presign route, local files from
// LOCAL_FILES_DOCUMENT_ROOT, data: URIs inline, other hosts only when the user allows them
// and never with the token.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "url_fetch.h"

namespace sam3::server {

struct LabelStudioOptions {
  std::string url;                         // LABEL_STUDIO_URL (or LABEL_STUDIO_HOST), --label-studio-url
  std::string api_key;                     // LABEL_STUDIO_API_KEY, --label-studio-api-key: legacy token or personal access token
  std::filesystem::path local_files_root;  // LOCAL_FILES_DOCUMENT_ROOT, --local-files-root
  std::vector<std::string> fetch_hosts;    // other hosts task URLs may name, "host[:port]" or "*"
  std::int64_t max_image_bytes = std::int64_t{64} << 20;
  long fetch_timeout_s = 30;
  int max_fetches = 4;  // task-image fetches in flight at once; more are answered 503 at once
  // Video tasks: frames tracked after a keyframe's box, or from the start when the labels are the
  // prompts (Label Studio's SAM2 video backend tracks 10: MAX_FRAMES_TO_TRACK).
  std::int64_t video_frames = 10;
};

// What one fetch may use: the request's deadline and whether its client is still there.
struct FetchBudget {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::function<bool()> given_up = [] { return false; };
};

// Credentials follow one rule: a token goes only to the address it was given with. The
// operator's key (LABEL_STUDIO_API_KEY) goes only to the operator's URL (LABEL_STUDIO_URL),
// never to a host a client names in /setup; a /setup's hostname and access_token are one pair,
// kept per project, and a /setup without a token gives its host none.
class TaskImages {
 public:
  explicit TaskImages(LabelStudioOptions options) : options_(std::move(options)) {}
  // What /setup said about Label Studio for `project` (Label Studio's "ID.TIMESTAMP").
  void remember_setup(const std::string& project, const std::string& hostname, const std::string& access_token);
  // The bytes of `ref` (task `task_id`'s data value, in `project`), fetched within `budget`.
  // Throws ApiError naming what went wrong and what to set.
  std::string fetch(const std::string& ref, std::int64_t task_id, const std::string& project, const FetchBudget& budget);

 private:
  struct Credentials {
    std::string url, origin, key;
  };
  struct Slot;  // one of the max_fetches fetches in flight
  Credentials credentials(const std::string& project);
  std::string authorization(const Credentials& c, bool renew, const FetchBudget& budget);  // "Authorization: ..." header
  std::string fetch_from_label_studio(const std::string& url, const std::string& ref, const Credentials& c, const FetchBudget& budget);
  std::string fetch_other(const std::string& url, const FetchBudget& budget);
  std::string read_local_file(const std::string& relative, const std::string& ref);
  bool host_allowed(const std::string& url) const;
  void limit(FetchRequest& request, const FetchBudget& budget) const;

  LabelStudioOptions options_;
  std::mutex mutex_;
  struct SetupPair {
    std::string url, token;
  };
  std::map<std::string, SetupPair> setups_;  // by project; bounded
  std::string last_setup_project_;
  std::map<std::string, std::string> access_tokens_;  // origin + " " + personal access token -> access token
  int fetches_in_flight_ = 0;
};

}  // namespace sam3::server
