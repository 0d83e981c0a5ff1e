#include "sam3/error.h"

#include <iterator>

namespace sam3 {
namespace {

constexpr ErrorTraits kTraits[] = {
#define SAM3_ERROR_ROW(id, name, exit_code, http_status, python) {ErrorCode::id, name, exit_code, http_status, python},
    SAM3_ERROR_CODES(SAM3_ERROR_ROW)
#undef SAM3_ERROR_ROW
};

}  // namespace

const ErrorTraits& error_traits(ErrorCode code) noexcept {
  const auto i = static_cast<std::size_t>(code);
  return i < std::size(kTraits) ? kTraits[i] : kTraits[static_cast<std::size_t>(ErrorCode::kRuntime)];
}
const ErrorTraits* error_traits_begin() noexcept { return std::begin(kTraits); }
const ErrorTraits* error_traits_end() noexcept { return std::end(kTraits); }

}  // namespace sam3
