// One file from a Hugging Face compatible hub into `part`, with libcurl: redirects followed,
// resume with Range after a dropped connection, retries with backoff on 5xx/429 and
// network errors. Checksums announced by the hub are returned for the caller to verify.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace sam3::hub {

struct DownloadRequest {
  std::string url;
  std::string token;  // sent as "Authorization: Bearer" (not forwarded to other hosts)
  int max_attempts = 5;
  double first_retry_delay_s = 1.0;
  long low_speed_timeout_s = 60;
  // The most bytes taken for the file when the hub does not announce its size; a body
  // longer than the size it announced is always cut off there.
  std::int64_t max_bytes = std::int64_t{64} << 30;
};

struct Announced {
  std::string sha256;    // X-Linked-Etag (LFS) or a 64-hex ETag
  std::string git_sha1;  // a 40-hex ETag (small files stored in git)
  std::int64_t size = -1;
};

enum class FailureKind { kNone, kUnauthorized, kNotFound, kUnreachable, kServer, kTooLong, kOther };

struct DownloadOutcome {
  Announced announced;
  FailureKind failure = FailureKind::kNone;
  std::string message;  // for failures: what happened, with the hub's error code if any
};

// Appends to an existing `part` (resume). progress(bytes on disk, total or 0).
DownloadOutcome download_to_part(const DownloadRequest& request, const std::filesystem::path& part,
                                 const std::function<void(std::int64_t, std::int64_t)>& progress);

}  // namespace sam3::hub
