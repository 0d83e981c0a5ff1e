#include "static_files.h"

#include <cctype>
#include <fstream>
#include <functional>
#include <optional>

#include "api_error.h"

namespace sam3::server {
namespace {

std::optional<std::string> percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
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
    if (segment.empty() || segment[0] == '.' || segment.find('\\') != std::string::npos ||
        segment.find('\0') != std::string::npos) {
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

HttpResponse answer(const HttpRequest& request, std::uint64_t size, const std::string& etag, const std::string& content_type,
                    const std::vector<std::pair<std::string, std::string>>& headers,
                    const std::function<std::string(std::uint64_t, std::uint64_t)>& read) {
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
    r.headers.emplace_back("Content-Range", "bytes " + std::to_string(range->first) + "-" + std::to_string(range->last) + "/" +
                                                std::to_string(size));
  }
  if (request.method == "HEAD") {
    r.headers.emplace_back("Content-Length", std::to_string(count));
    return r;
  }
  r.body = read(first, count);
  return r;
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
                        const std::vector<std::pair<std::string, std::string>>& headers) {
  const auto decoded = percent_decode(relative);
  if (!decoded || !safe_relative(*decoded) || root.empty()) return not_found(headers);
  const std::filesystem::path path = root / *decoded;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return not_found(headers);  // follows links the folder holds
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return not_found(headers);
  const auto mtime = static_cast<std::uint64_t>(std::filesystem::last_write_time(path, ec).time_since_epoch().count());
  const std::string etag = "\"" + std::to_string(size) + "-" + std::to_string(mtime) + "\"";
  return answer(request, size, etag, content_type_of(path), headers, [&](std::uint64_t first, std::uint64_t count) {
    std::ifstream in(path, std::ios::binary);
    std::string data(count, '\0');
    in.seekg(static_cast<std::streamoff>(first));
    if (!in.read(data.data(), static_cast<std::streamsize>(count))) {
      throw ApiError(500, "internal", "cannot read " + path.filename().string());
    }
    return data;
  });
}

HttpResponse serve_bytes(const HttpRequest& request, std::string_view data, const std::string& content_type,
                         const std::vector<std::pair<std::string, std::string>>& headers) {
  const std::string etag = "\"" + std::to_string(data.size()) + "-" + std::to_string(std::hash<std::string_view>{}(data)) + "\"";
  return answer(request, data.size(), etag, content_type, headers,
                [&](std::uint64_t first, std::uint64_t count) { return std::string(data.substr(first, count)); });
}

}  // namespace sam3::server
