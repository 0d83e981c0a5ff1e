// libFuzzer target: arbitrary bytes as the files sam3 reads back from an output folder it
// updates: `.sam3-outputs.json` (the entries sam3 owns and what it wrote inside each, first byte
// even) or the journal of an update a crash left behind (odd). A folder holding sam3's `coco/`
// beside a user's `notes.txt` and `coco-user/` (a folder sam3 did not write), with a file
// outside the folder, is then updated as a run would: `coco` staged and committed, `masks`
// retired. Whatever the bytes say, the user's files and everything outside the folder stay
// byte for byte, and a refusal is a sam3::Error. Never a crash, hang or sanitizer report.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_files.h"
#include "sam3/error.h"
#include "sam3/output_folder.h"

namespace {

namespace fs = std::filesystem;
using sam3::fuzz::read;
using sam3::fuzz::write;

const fs::path& work_dir() { return sam3::fuzz::work_dir("sam3_manifest_fuzz_"); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const fs::path root = work_dir() / "out", outside = work_dir() / "outside.txt";
  std::error_code ec;
  fs::remove_all(root, ec);
  write(outside, "outside");
  write(root / "notes.txt", "the user's");
  write(root / "coco-user" / "a.json", "the user's folder");
  write(root / "coco" / "annotations.json", "{}");
  write(root / "masks" / "a.png", "png");
  const std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string sound_manifest = R"({"written_by":"sam3","entries":["coco","masks"],)"
                                     R"("contents":{"coco":["annotations.json"],"masks":["a.png"]}})";
  if (data[0] % 2 == 0) {
    write(root / ".sam3-outputs.json", bytes);
  } else {
    write(root / ".sam3-outputs.json", sound_manifest);
    write(root / ".sam3-update-1-2" / "journal.json", bytes);  // a crashed update's
  }
  try {
    sam3::OutputFolderUpdate update(root);
    write(update.stage("coco") / "annotations.json", R"({"images":[]})");
    update.retire("masks");
    update.commit();
  } catch (const sam3::Error&) {
  }
  if (read(outside) != "outside" || read(root / "notes.txt") != "the user's" ||
      read(root / "coco-user" / "a.json") != "the user's folder") {
    std::abort();  // sam3 changed what it did not create
  }
  return 0;
}
