#include "sam3/log.h"

#include <atomic>
#include <cstdio>
#include <mutex>

namespace sam3 {
namespace {

std::atomic<LogLevel> g_level{LogLevel::kWarning};
std::mutex g_mutex;
std::function<void(LogLevel, const std::string&)> g_sink;

const char* prefix(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    default:
      return "error";
  }
}

}  // namespace

void set_log_level(LogLevel level) { g_level = level; }
LogLevel log_level() { return g_level; }

void set_log_sink(std::function<void(LogLevel, const std::string&)> sink) {
  std::lock_guard lock(g_mutex);
  g_sink = std::move(sink);
}

void log(LogLevel level, const std::string& message) {
  if (level < g_level.load() || level == LogLevel::kOff) return;
  std::lock_guard lock(g_mutex);
  if (g_sink) {
    g_sink(level, message);
  } else {
    std::fprintf(stderr, "sam3: %s: %s\n", prefix(level), message.c_str());
  }
}

}  // namespace sam3
