// The library's base64 (sam3/base64.h), under the server's names.
#pragma once

#include "sam3/base64.h"

namespace sam3::server {

using sam3::base64_decode;
using sam3::base64_encode;

}  // namespace sam3::server
