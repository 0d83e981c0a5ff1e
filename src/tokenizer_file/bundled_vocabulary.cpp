// Where the vocabulary sam3 ships lives: one answer for the library, the CLI and the tools.
#include <cstdlib>
#include <system_error>

#include "sam3/tokenizer.h"

namespace sam3 {

std::filesystem::path bundled_vocabulary() {
  const std::filesystem::path file = std::filesystem::path("clip") / "bpe_simple_vocab_16e6.txt.gz";
  if (const char* env = std::getenv("SAM3_DATA_DIR"); env && *env) return std::filesystem::path(env) / file;
  std::error_code ec;
  const auto built = std::filesystem::path(SAM3_DEFAULT_DATA_DIR) / file;
  if (std::filesystem::exists(built, ec)) return built;
  return std::filesystem::path(SAM3_INSTALL_DATA_DIR) / file;
}

}  // namespace sam3
