// The image bytes a Label Studio task names, fetched as Label Studio's own ML backend SDK
// does: relative URLs (/data/upload/..., /data/local-files/?d=...) from Label Studio with its
// token, cloud URIs (s3://, gs://, azure-blob://) through its presign route, local files from
// LOCAL_FILES_DOCUMENT_ROOT, data: URIs inline, other hosts only when the user allows them
// and never with the token.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace sam3::server {

struct LabelStudioOptions {
  std::string url;      // LABEL_STUDIO_URL (or LABEL_STUDIO_HOST), --label-studio-url
  std::string api_key;  // LABEL_STUDIO_API_KEY, --label-studio-api-key: legacy token or personal access token
  std::filesystem::path local_files_root;  // LOCAL_FILES_DOCUMENT_ROOT, --local-files-root
  std::vector<std::string> fetch_hosts;    // other hosts task URLs may name, "host[:port]" or "*"
  std::int64_t max_image_bytes = std::int64_t{64} << 20;
  long fetch_timeout_s = 30;
};

class TaskImages {
 public:
  explicit TaskImages(LabelStudioOptions options) : options_(std::move(options)) {}
  // What /setup said about Label Studio, used when the options name none.
  void remember_setup(const std::string& hostname, const std::string& access_token);
  // The bytes of `ref` (task `task_id`'s data value). Throws ApiError naming what went wrong
  // and what to set.
  std::string fetch(const std::string& ref, std::int64_t task_id);

 private:
  struct Credentials {
    std::string url, origin, key;
  };
  Credentials credentials();
  std::string authorization(const Credentials& c, bool renew);  // "Authorization: ..." header
  std::string fetch_from_label_studio(const std::string& url, const std::string& ref, const Credentials& c);
  std::string fetch_other(const std::string& url);
  std::string read_local_file(const std::string& relative, const std::string& ref);
  bool host_allowed(const std::string& url) const;

  LabelStudioOptions options_;
  std::mutex mutex_;
  std::string setup_url_, setup_key_;
  std::string access_token_;  // from exchanging a personal access token
  std::string access_for_key_;
};

}  // namespace sam3::server
