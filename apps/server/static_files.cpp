#include "static_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <functional>
#include <optional>
#include <utility>

namespace sam3::server {
namespace {

std::optional<std::string> percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i + 1])) || !std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      return std::nullopt;
    }
    out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
    i += 2;
  }
  return out;
}

// Each segment a plain name: no empty, dot-led ("..", ".sam3-cache"), backslash or NUL ones.
bool safe_relative(const std::string& path) {
  if (path.empty()) return false;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string segment = path.substr(start, end - start);
    if (segment.empty() || segment[0] == '.' || segment.find('\\') != std::string::npos || segment.find('\0') != std::string::npos) {
      return false;
    }
    start = end + 1;
  }
  return true;
}

HttpResponse not_found(const std::vector<std::pair<std::string, std::string>>& headers) {
  HttpResponse r;
  r.status = 404;
  r.body = R"({"error":{"code":"not_found","message":"no such file"}})";
  r.headers = headers;
  return r;
}

struct Range {
  std::uint64_t first = 0, last = 0;  // inclusive
};

// One range of "bytes=a-b", "bytes=a-" or "bytes=-n"; nullopt for none or several (the whole
// file is then sent, as RFC 9110 allows); `unsatisfiable` when it lies past the end.
std::optional<Range> parse_range(const std::string& header, std::uint64_t size, bool* unsatisfiable) {
  *unsatisfiable = false;
  if (!header.starts_with("bytes=") || header.find(',') != std::string::npos) return std::nullopt;
  const std::string spec = header.substr(6);
  const auto dash = spec.find('-');
  if (dash == std::string::npos) return std::nullopt;
  const std::string a = spec.substr(0, dash), b = spec.substr(dash + 1);
  const auto number = [](const std::string& s) -> std::optional<std::uint64_t> {
    if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    return std::stoull(s);
  };
  Range r;
  if (a.empty()) {  // the last n bytes
    const auto n = number(b);
    if (!n) return std::nullopt;
    if (*n == 0 || size == 0) {
      *unsatisfiable = true;
      return std::nullopt;
    }
    r.first = *n >= size ? 0 : size - *n;
    r.last = size - 1;
    return r;
  }
  const auto first = number(a);
  if (!first) return std::nullopt;
  const auto last = b.empty() ? std::optional<std::uint64_t>(size ? size - 1 : 0) : number(b);
  if (!last || (!b.empty() && *last < *first)) return std::nullopt;
  if (*first >= size) {
    *unsatisfiable = true;
    return std::nullopt;
  }
  r.first = *first;
  r.last = std::min(*last, size - 1);
  return r;
}

// `fill` puts bytes first..first+count-1 in the response (as its body or its source).
HttpResponse answer(const HttpRequest& request, std::uint64_t size, const std::string& etag, const std::string& content_type,
                    const std::vector<std::pair<std::string, std::string>>& headers,
                    const std::function<void(HttpResponse&, std::uint64_t, std::uint64_t)>& fill) {
  HttpResponse r;
  r.headers = headers;
  r.headers.emplace_back("Accept-Ranges", "bytes");
  r.headers.emplace_back("ETag", etag);
  r.headers.emplace_back("Cache-Control", "no-cache");  // kept, revalidated by ETag
  if (request.header("if-none-match") == etag) {
    r.status = 304;
    r.content_type.clear();
    return r;
  }
  r.content_type = content_type;
  bool unsatisfiable = false;
  std::optional<Range> range;
  const std::string if_range = request.header("if-range");
  if (if_range.empty() || if_range == etag) range = parse_range(request.header("range"), size, &unsatisfiable);
  if (unsatisfiable) {
    r.status = 416;
    r.content_type.clear();
    r.headers.emplace_back("Content-Range", "bytes */" + std::to_string(size));
    return r;
  }
  const std::uint64_t first = range ? range->first : 0, count = range ? range->last - range->first + 1 : size;
  if (range) {
    r.status = 206;
    r.headers.emplace_back("Content-Range",
                           "bytes " + std::to_string(range->first) + "-" + std::to_string(range->last) + "/" + std::to_string(size));
  }
  if (request.method == "HEAD") {
    r.headers.emplace_back("Content-Length", std::to_string(count));
    return r;
  }
  fill(r, first, count);
  return r;
}

// An open file's bytes first..first+count-1, read piece by piece while they are sent. The file
// stays open, so a file replaced meanwhile is still sent as it was when the request came.
class FileRange final : public BodySource {
 public:
  FileRange(int fd, std::uint64_t first, std::uint64_t count) : fd_(fd), at_(first), left_(count), size_(count) {}
  ~FileRange() override { ::close(fd_); }
  FileRange(const FileRange&) = delete;
  FileRange& operator=(const FileRange&) = delete;
  std::uint64_t size() const override { return size_; }
  std::size_t read(char* buffer, std::size_t n) override {
    n = static_cast<std::size_t>(std::min<std::uint64_t>(n, left_));
    ssize_t got = -1;
    do {
      got = ::pread(fd_, buffer, n, static_cast<off_t>(at_));
    } while (got < 0 && errno == EINTR);
    if (got <= 0) return 0;
    at_ += static_cast<std::uint64_t>(got);
    left_ -= static_cast<std::uint64_t>(got);
    return static_cast<std::size_t>(got);
  }

 private:
  int fd_;
  std::uint64_t at_, left_, size_;
};

// The regular file at `path`, opened; -1 when it is not one. Links the folder holds are
// followed; anything else is not opened (a device may act on open), and what is opened is
// checked again (a FIFO put there in between is not waited on: opened without blocking).
int open_regular_file(const std::filesystem::path& path, struct stat* st) {
  if (::stat(path.c_str(), st) != 0 || !S_ISREG(st->st_mode)) return -1;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -1;
  if (::fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

std::string content_type_of(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js" || ext == ".mjs") return "text/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".json") return "application/json";
  if (ext == ".wasm") return "application/wasm";
  if (ext == ".ts") return "text/plain; charset=utf-8";
  if (ext == ".gz") return "application/gzip";
  return "application/octet-stream";
}

HttpResponse serve_file(const HttpRequest& request, const std::filesystem::path& root, const std::string& relative,
                        const std::vector<std::pair<std::string, std::string>>& headers,
                        const std::function<bool(const std::string&)>& allowed) {
  const auto decoded = percent_decode(relative);
  if (!decoded || !safe_relative(*decoded) || root.empty() || (allowed && !allowed(*decoded))) return not_found(headers);
  const std::filesystem::path path = root / *decoded;
  struct stat st {};
  struct OpenFile {
    int fd;
    ~OpenFile() {
      if (fd >= 0) ::close(fd);
    }
  } file{open_regular_file(path, &st)};
  if (file.fd < 0) return not_found(headers);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const auto mtime = static_cast<std::uint64_t>(st.st_mtim.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(st.st_mtim.tv_nsec);
  const std::string etag = "\"" + std::to_string(size) + "-" + std::to_string(mtime) + "\"";
  return answer(request, size, etag, content_type_of(path), headers, [&](HttpResponse& r, std::uint64_t first, std::uint64_t count) {
    r.source = std::make_shared<FileRange>(std::exchange(file.fd, -1), first, count);
  });
}

HttpResponse serve_bytes(const HttpRequest& request, std::string_view data, const std::string& content_type,
                         const std::vector<std::pair<std::string, std::string>>& headers) {
  const std::string etag = "\"" + std::to_string(data.size()) + "-" + std::to_string(std::hash<std::string_view>{}(data)) + "\"";
  return answer(request, data.size(), etag, content_type, headers,
                [&](HttpResponse& r, std::uint64_t first, std::uint64_t count) { r.body = std::string(data.substr(first, count)); });
}

}  // namespace sam3::server
