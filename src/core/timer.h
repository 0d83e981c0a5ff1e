#pragma once

#include <chrono>

namespace sam3::core {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

}  // namespace sam3::core
