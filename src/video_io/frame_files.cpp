// Per-frame file names, and cutting a folder of them back to a checkpoint.
#include <charconv>
#include <cstdio>

#include "sam3/error.h"
#include "video_io/partial_sink.h"

namespace sam3::video_io {

namespace fs = std::filesystem;

std::string frame_file_name(const std::string& prefix, std::int64_t index, int digits, const std::string& ext) {
  std::string number = std::to_string(index);
  if (static_cast<int>(number.size()) < digits) number.insert(0, static_cast<size_t>(digits) - number.size(), '0');
  return prefix + number + ext;
}

void remove_frame_files_after(const fs::path& folder, const std::string& prefix, const std::string& ext, std::int64_t last_index) {
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() + ext.size() || name.rfind(prefix, 0) != 0 ||
        name.compare(name.size() - ext.size(), ext.size(), ext) != 0) {
      continue;
    }
    std::int64_t index = -1;
    const char* first = name.data() + prefix.size();
    const char* last = name.data() + name.size() - ext.size();
    const auto parsed = std::from_chars(first, last, index);
    if (parsed.ec == std::errc() && parsed.ptr == last && index > last_index) fs::remove(it->path(), ec);
  }
}

void link_into_stage(const fs::path& from, OutputFolderUpdate& update, const std::string& entry) {
  const fs::path to = update.stage(entry);
  std::error_code ec;
  fs::remove_all(to, ec);
  // Hard links (a copy where the file system has none): the partial run stays whole until the
  // new outputs are in place, so a finish that fails (a full disk) or is killed is run again
  // from it, without tracking again.
  auto place = [&](const fs::path& source, const fs::path& target) {
    std::error_code link_ec;
    fs::create_hard_link(source, target, link_ec);
    if (link_ec) fs::copy_file(source, target, fs::copy_options::overwrite_existing, ec);
  };
  if (fs::is_directory(from, ec)) {
    fs::create_directories(to, ec);
    for (fs::recursive_directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec)) {
      const fs::path target = to / it->path().lexically_relative(from);
      if (it->is_directory(ec))
        fs::create_directories(target, ec);
      else
        place(it->path(), target);
      if (ec) break;
    }
  } else {
    place(from, to);
  }
  if (ec) throw Error(ErrorCode::kIo, to.string() + ": cannot put the finished " + entry + " in place (" + ec.message() + ")");
}

}  // namespace sam3::video_io
