#include "cli_common.h"

#include <cstdio>
#include <cstdlib>

namespace sam3::cli {

int exit_code_for(ErrorCode code) { return error_traits(code).exit_code; }

void print_error(const std::string& message) { std::fprintf(stderr, "sam3: error: %s\n", message.c_str()); }

}  // namespace sam3::cli
