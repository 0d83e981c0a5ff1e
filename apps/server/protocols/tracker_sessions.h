// The tracking sessions of CVAT's tracker function, kept on the server: a session is one
// sam3::VideoTracker following the objects CVAT started together, fed one frame per call.
// CVAT keeps only an opaque {"session", "object"} per object (its `states`); the memory bank
// behind it (megabytes of features per object, tied to the model) stays here. A bounded LRU:
// the least recently used session is dropped when a new one would exceed the capacity, and a
// state naming a dropped session is answered as expired.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
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
  int width = 0, height = 0;       // every frame of a session has the first one's size
  std::int64_t next_index = 0;     // CVAT sends no frame number: a session counts the frames it was given
  std::vector<Box> last_boxes;     // per object: its box on the last frame it was seen (kept while lost)
  std::atomic<bool> broken = false;            // a frame failed midway (timeout, error): its memory is not to be trusted
};

class TrackerSessions {
 public:
  explicit TrackerSessions(std::size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}
  // Keeps `session` under a new unguessable id (128 random bits, hex), dropping the least
  // recently used session beyond the capacity (a call still using it keeps it alive until it ends).
  std::string add(std::shared_ptr<TrackerSession> session);
  // The session, now the most recently used; null when the id is unknown or was dropped.
  std::shared_ptr<TrackerSession> find(const std::string& id);
  void remove(const std::string& id);
  std::size_t size() const;
  std::size_t capacity() const { return capacity_; }

 private:
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::list<std::string> order_;  // most recently used first
  std::map<std::string, std::pair<std::shared_ptr<TrackerSession>, std::list<std::string>::iterator>> by_id_;
};

}  // namespace sam3::server
