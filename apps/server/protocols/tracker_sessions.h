// The tracking sessions of CVAT's tracker function, kept on the server: a session is one
// sam3::VideoTracker following the objects CVAT started together, fed one frame per call.
// CVAT keeps only an opaque {"session", "object"} per object (its `states`); the memory bank
// behind it (megabytes of features per object, tied to the model) stays here.
//
// Bounded by bytes, not by count: each session reserves what its memory bank can come to once
// full (VideoTrackerStats::memory_bank_limit_bytes; a 64-object SAM 3.1 session held about
// 390 MB), within a budget for all sessions and a share of it for each client (a peer address).
// A new session makes room by dropping its own client's least recently used sessions, and
// other clients' sessions only once they have been idle for `idle`: one client never expires
// another's sessions in use. When that is not enough the session is refused (and nothing is
// dropped). A state naming a dropped session is answered as expired.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sam3/types.h"
#include "sam3/video_tracker.h"

namespace sam3::server {

struct TrackerSession {
  std::mutex mutex;  // one call at a time feeds a session
  std::unique_ptr<VideoTracker> tracker;
  int width = 0, height = 0;         // every frame of a session has the first one's size
  std::int64_t next_index = 0;       // CVAT sends no frame number: a session counts the frames it was given
  std::vector<Box> last_boxes;       // per object: its box on the last frame it was seen (kept while lost)
  std::atomic<bool> broken = false;  // a frame failed midway (timeout, error): its memory is not to be trusted
};

struct TrackerBudget {
  std::uint64_t total_bytes = 4096ull << 20;   // every session together (sam3 serve --cvat-tracker-memory, MB)
  std::uint64_t client_bytes = 1024ull << 20;  // one client's sessions together (--cvat-tracker-client-memory)
  std::size_t client_sessions = 32;            // one client's sessions in number (--cvat-tracker-sessions)
  std::chrono::seconds idle{600};              // another client's session unused this long may be dropped
};

class TrackerSessions {
 public:
  using Clock = std::chrono::steady_clock;
  // `now` is the clock idle times are read on (tests pass their own).
  explicit TrackerSessions(TrackerBudget budget, std::function<Clock::time_point()> now = Clock::now);

  enum class Refusal {
    kNone,
    kOverClientShare,  // the session alone is more than a client's share
    kServerFull,       // the other clients' sessions in use fill the budget
  };
  struct Added {
    std::string id;  // empty when refused
    Refusal refusal = Refusal::kNone;
  };
  // Keeps `session` (reserving `bytes`) for `client` under a new unguessable id (128 random
  // bits, hex), after dropping what must go to make room as the header says; or keeps nothing
  // and drops nothing. A dropped session a call still uses lives until that call ends.
  Added add(std::shared_ptr<TrackerSession> session, const std::string& client, std::uint64_t bytes);
  // Whether a session of `bytes` for `client` would be kept now; changes nothing.
  Refusal check(const std::string& client, std::uint64_t bytes) const;
  // The session, now the most recently used; null when the id is unknown or was dropped.
  std::shared_ptr<TrackerSession> find(const std::string& id);
  void remove(const std::string& id);
  std::size_t size() const;
  std::uint64_t bytes() const;                                  // reserved by every session
  std::uint64_t client_bytes(const std::string& client) const;  // reserved by one client's
  const TrackerBudget& budget() const { return budget_; }

 private:
  struct Entry {
    std::shared_ptr<TrackerSession> session;
    std::string client;
    std::uint64_t bytes = 0;
    Clock::time_point used;
    std::list<std::string>::iterator order;
  };
  // The sessions to drop for `client` to keep `bytes` more, least recently used first; false when none will do.
  bool plan(const std::string& client, std::uint64_t bytes, std::vector<std::string>& victims, Refusal& refusal) const;
  void drop(std::map<std::string, Entry>::iterator it);

  TrackerBudget budget_;
  std::function<Clock::time_point()> now_;
  mutable std::mutex mutex_;
  std::list<std::string> order_;  // most recently used first
  std::map<std::string, Entry> by_id_;
  std::map<std::string, std::uint64_t> client_bytes_;
  std::map<std::string, std::size_t> client_count_;
  std::uint64_t bytes_ = 0;
};

}  // namespace sam3::server
