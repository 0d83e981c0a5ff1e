#include "video_io/frame_folder.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "sam3/error.h"
#include "sam3/video_sources.h"

namespace sam3::video_io {

namespace fs = std::filesystem;

namespace {

// The extensions sam3::load_image decodes; anything else in the folder is not a frame.
bool is_image_name(const fs::path& p) {
  static const std::array<std::string, 7> kExtensions = {".jpg", ".jpeg", ".png", ".webp", ".bmp", ".tif", ".tiff"};
  std::string ext = p.extension().string();
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return std::find(kExtensions.begin(), kExtensions.end(), ext) != kExtensions.end();
}

// What an entry named like a frame is when it is no file, for the message.
std::string what_it_is(const fs::directory_entry& entry) {
  std::error_code ec;
  if (entry.is_symlink(ec) && !fs::exists(entry.status(ec))) return "a link to nothing";
  const auto type = entry.status(ec).type();
  switch (type) {
    case fs::file_type::directory:
      return "a folder";
    case fs::file_type::fifo:
      return "a FIFO";
    case fs::file_type::socket:
      return "a socket";
    case fs::file_type::block:
    case fs::file_type::character:
      return "a device";
    default:
      return "not a readable file";
  }
}

}  // namespace

std::vector<fs::path> list_frame_files(const fs::path& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) throw Error(ErrorCode::kImageUnreadable, folder.string() + ": no such folder");
  std::vector<fs::path> files;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (!is_image_name(it->path())) continue;
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) {
      throw Error(ErrorCode::kImageUnreadable,
                  it->path().string() + ": " + what_it_is(*it) + " among the frames; without it every later frame's index " +
                      "would shift: restore the file, or move it out of the folder (and start the outputs over)");
    }
    files.push_back(it->path());
  }
  if (ec) throw Error(ErrorCode::kImageUnreadable, folder.string() + ": cannot list the folder (" + ec.message() + ")");
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return natural_less(a.filename().string(), b.filename().string()); });
  return files;
}

}  // namespace sam3::video_io
