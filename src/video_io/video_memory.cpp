// The memory a tracking run needs at a video's frame size, and what this process may still take.
#include "sam3/video_memory.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "sam3/error.h"

namespace sam3 {

namespace {

// "Key:   123 kB" of a /proc file, in bytes; -1 when absent.
std::int64_t proc_kib(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    std::int64_t kib = -1;
    fields >> kib;
    return kib < 0 ? -1 : kib * 1024;
  }
  return -1;
}

// A cgroup file holding one number ("max": no limit); -1 when absent or unlimited.
std::int64_t cgroup_number(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return -1;
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    return -1;
  }
}

// The room under the tightest memory limit of this process's cgroup and its parents (v2), or
// of its v1 memory cgroup; -1 when there is none.
std::int64_t cgroup_room() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  std::int64_t room = -1;
  auto take = [&](std::int64_t limit, std::int64_t used) {
    if (limit < 0 || used < 0 || limit > (std::int64_t{1} << 60)) return;  // v1 writes "unlimited" as a huge number
    const std::int64_t left = std::max<std::int64_t>(0, limit - used);
    room = room < 0 ? left : std::min(room, left);
  };
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0) {
      std::string path = line.substr(3);
      for (;;) {
        const std::string dir = "/sys/fs/cgroup" + (path == "/" ? std::string() : path);
        take(cgroup_number(dir + "/memory.max"), cgroup_number(dir + "/memory.current"));
        if (path.empty() || path == "/") break;
        const auto slash = path.rfind('/');
        path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
      }
    } else if (line.find(":memory:") != std::string::npos) {
      const std::string dir = "/sys/fs/cgroup/memory" + line.substr(line.find(":memory:") + 8);
      take(cgroup_number(dir + "/memory.limit_in_bytes"), cgroup_number(dir + "/memory.usage_in_bytes"));
    }
  }
  return room;
}

std::string gigabytes(std::int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB", static_cast<double>(bytes) / 1e9);
  return text;
}

}  // namespace

std::int64_t video_tracking_bytes(int width, int height, int hotstart_delay, bool hold_frames) {
  const std::int64_t pixels = static_cast<std::int64_t>(std::max(0, width)) * std::max(0, height);
  const std::int64_t waiting = std::max(0, hotstart_delay) + 1;  // results (and frames) the delay holds
  // Per pixel: the decoder's frame (up to 4 bytes), RGB (3), the label map (2), a format's
  // buffer (2: MOTS's 16-bit PNG), a copy of the object's mask (1).
  std::int64_t per_pixel = 4 + 3 + 2 + 2 + 1 + waiting;  // + one object's mask per waiting result
  if (hold_frames) per_pixel += 3 * waiting;
  return pixels * per_pixel;
}

std::int64_t available_memory_bytes() {
  std::int64_t room = proc_kib("/proc/meminfo", "MemAvailable");
  auto take = [&](std::int64_t r) {
    if (r >= 0) room = room < 0 ? r : std::min(room, r);
  };
  take(cgroup_room());
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    const std::int64_t used = proc_kib("/proc/self/status", "VmSize");
    if (used >= 0) take(std::max<std::int64_t>(0, static_cast<std::int64_t>(limit.rlim_cur) - used));
  }
  return room;
}

void check_video_tracking_memory(const VideoInfo& info, int hotstart_delay, bool hold_frames) {
  const std::int64_t needed = video_tracking_bytes(info.width, info.height, hotstart_delay, hold_frames);
  const std::int64_t available = available_memory_bytes();
  if (available < 0 || needed <= available) return;
  std::string what = info.name + ": tracking frames of " + std::to_string(info.width) + "x" + std::to_string(info.height) +
                     " needs at least " + gigabytes(needed);
  if (hold_frames) {
    what += " (" +
            gigabytes(video_tracking_bytes(info.width, info.height, hotstart_delay, true) -
                      video_tracking_bytes(info.width, info.height, hotstart_delay, false)) +
            " of it the " + std::to_string(hotstart_delay + 1) + " frames the overlay holds while the hot-start delay waits)";
  }
  what += ", more than the " + gigabytes(available) + " this process can still take; scale the video down first " +
          "(ffmpeg -i IN -vf scale=1920:-2 OUT.mp4)";
  if (hold_frames) what += ", or leave overlay out of the formats";
  throw Error(ErrorCode::kImageTooLarge, what);
}

}  // namespace sam3
