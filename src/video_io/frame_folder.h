// The frames of a folder of images, as every reader of it sees them: FolderSource (the frames)
// and the source identity a resumed run checks (source_identity.cpp).
#pragma once

#include <filesystem>
#include <vector>

namespace sam3::video_io {

// The files of `folder` with an image extension (JPEG, PNG, WebP, BMP, TIFF; any case), in
// natural order. An entry with such a name that is not a file (a link to nothing, a FIFO, a
// folder, a device) is refused (kImageUnreadable naming it): skipping it would shift the
// index of every later frame. Throws kImageUnreadable for a missing or unlistable folder.
std::vector<std::filesystem::path> list_frame_files(const std::filesystem::path& folder);

}  // namespace sam3::video_io
