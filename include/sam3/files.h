// Files that are whole or absent: what sam3 writes (results, records, cache entries, models)
// goes through a temporary file in the same folder, flushed to disk and renamed into place,
// so a crash or power cut never leaves a half-written file under the final name.
//
//   sam3::write_file_atomic(out / "result.json", json_text);
//
// Thread-safe and safe across processes: concurrent writers of one path each write their own
// temporary, and the last rename wins.
#pragma once

#include <filesystem>
#include <string>

namespace sam3 {

// Writes bytes to path (creating its folder) via "<path>.tmp<pid>-<n>" and a rename.
// Throws kIo naming the path and the reason (disk full, permissions).
void write_file_atomic(const std::filesystem::path& path, const std::string& bytes);
// Removes the temporary files that write_file_atomic left in `dir` when its process died
// (names "<file>.tmp<pid>-<n>" whose process no longer runs); nothing else.
void remove_stale_temporaries(const std::filesystem::path& dir);

}  // namespace sam3
