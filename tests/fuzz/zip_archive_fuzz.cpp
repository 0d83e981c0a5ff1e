// libFuzzer target: arbitrary bytes as a .zip for `sam3 models import` and zipped models on the
// hub: the central directory is read, every entry's declared size asked for and every entry
// unpacked under a 1 MiB bound. A bad archive must be sam3::Error; an entry that unpacks must
// be exactly its declared size, and a failed one must leave no file. Never a crash, hang or
// sanitizer report.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "hub/zip_reader.h"
#include "sam3/error.h"

namespace {

namespace fs = std::filesystem;

const fs::path& work_dir() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("sam3_zip_fuzz_" + std::to_string(getpid()));
    fs::create_directories(d);
    std::atexit([] { fs::remove_all(work_dir()); });
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  constexpr std::int64_t kBound = 1 << 20;
  const fs::path archive = work_dir() / "input.zip", out = work_dir() / "entry.part";
  std::ofstream(archive, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), std::streamsize(size));
  try {
    sam3::hub::ZipReader reader;
    reader.open(archive);
    for (const auto& name : reader.entries()) {
      try {
        const std::int64_t declared = reader.declared_size(name);
        reader.extract(name, out, kBound);
        if (static_cast<std::int64_t>(fs::file_size(out)) != declared || declared > kBound) std::abort();
      } catch (const sam3::Error&) {
        if (fs::exists(out)) std::abort();  // a failed entry leaves nothing behind
      }
      std::error_code ec;
      fs::remove(out, ec);
    }
  } catch (const sam3::Error&) {
  }
  return 0;
}
