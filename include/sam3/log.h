// Library diagnostics go to a sink the application chooses (stderr by default), never stdout.
#pragma once

#include <functional>
#include <string>

namespace sam3 {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

void set_log_level(LogLevel level);
LogLevel log_level();
// Replaces the sink; pass nullptr to restore the stderr sink.
void set_log_sink(std::function<void(LogLevel, const std::string&)> sink);
void log(LogLevel level, const std::string& message);

}  // namespace sam3
