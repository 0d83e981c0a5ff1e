// The CVAT tracker's sessions are bounded by the bytes their memory banks reserve, not by their
// number, and one client never expires another's sessions in use (issue 42, item 8: with a
// count of 32 shared by everyone, 64-object sessions reached 15 GB, and any client's new
// sessions pushed out everyone else's).
#include <gtest/gtest.h>

#include <memory>

#include "protocols/tracker_sessions.h"

namespace {

using sam3::server::TrackerBudget;
using sam3::server::TrackerSession;
using sam3::server::TrackerSessions;
using Refusal = TrackerSessions::Refusal;
using Clock = TrackerSessions::Clock;

constexpr std::uint64_t kMB = 1ull << 20;

struct Fixture {
  Clock::time_point now = Clock::time_point{} + std::chrono::hours(1);
  TrackerSessions sessions;
  explicit Fixture(TrackerBudget budget) : sessions(budget, [this] { return now; }) {}
  std::string add(const std::string& client, std::uint64_t bytes, Refusal* refusal = nullptr) {
    const auto added = sessions.add(std::make_shared<TrackerSession>(), client, bytes);
    if (refusal) *refusal = added.refusal;
    return added.id;
  }
};

TrackerBudget budget(std::uint64_t total_mb, std::uint64_t client_mb, std::size_t count = 32) {
  return {.total_bytes = total_mb * kMB, .client_bytes = client_mb * kMB, .client_sessions = count, .idle = std::chrono::seconds(600)};
}

TEST(TrackerSessions, AreBoundedByTheBytesTheyReserveNotByTheirCount) {
  Fixture f(budget(1000, 1000, 10000));
  // Three 390 MB sessions (64 objects each at SAM 3.1's sizes) do not fit in 1000 MB, though
  // three is far below any count: the oldest one makes room.
  const std::string a = f.add("10.0.0.1", 390 * kMB), b = f.add("10.0.0.1", 390 * kMB), c = f.add("10.0.0.1", 390 * kMB);
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(f.sessions.find(a), nullptr) << "the client's least recently used session made room";
  EXPECT_NE(f.sessions.find(b), nullptr);
  EXPECT_EQ(f.sessions.bytes(), 780 * kMB);
  EXPECT_LE(f.sessions.bytes(), f.sessions.budget().total_bytes);
}

TEST(TrackerSessions, OneClientCannotExpireAnothersSessionsInUse) {
  Fixture f(budget(1000, 600));
  const std::string theirs = f.add("10.0.0.1", 500 * kMB);
  Refusal refusal = Refusal::kNone;
  // Another client fills its share and then some: refused, and the first client's session stays.
  ASSERT_FALSE(f.add("10.0.0.2", 400 * kMB).empty());
  EXPECT_TRUE(f.add("10.0.0.2", 550 * kMB, &refusal).empty());
  EXPECT_EQ(refusal, Refusal::kServerFull);
  EXPECT_NE(f.sessions.find(theirs), nullptr) << "a session in use was dropped for another client";
  EXPECT_EQ(f.sessions.check("10.0.0.2", 550 * kMB), Refusal::kServerFull);
  // Within its own share a client drops its own sessions, never the other's.
  ASSERT_FALSE(f.add("10.0.0.2", 450 * kMB).empty());
  EXPECT_NE(f.sessions.find(theirs), nullptr);
  EXPECT_EQ(f.sessions.client_bytes("10.0.0.2"), 450 * kMB);
}

TEST(TrackerSessions, ARefusedSessionKeepsNothingAndDropsNothing) {
  Fixture f(budget(1000, 600));
  const std::string mine = f.add("10.0.0.1", 300 * kMB), theirs = f.add("10.0.0.2", 600 * kMB);
  Refusal refusal = Refusal::kNone;
  EXPECT_TRUE(f.add("10.0.0.1", 700 * kMB, &refusal).empty()) << "more than a client's share";
  EXPECT_EQ(refusal, Refusal::kOverClientShare);
  EXPECT_TRUE(f.add("10.0.0.1", 500 * kMB, &refusal).empty()) << "the other client's 600 MB are in use";
  EXPECT_EQ(refusal, Refusal::kServerFull);
  EXPECT_NE(f.sessions.find(mine), nullptr) << "a refused call dropped its client's own session";
  EXPECT_NE(f.sessions.find(theirs), nullptr);
  EXPECT_EQ(f.sessions.size(), 2u);
  EXPECT_EQ(f.sessions.bytes(), 900 * kMB);
}

TEST(TrackerSessions, AnotherClientsIdleSessionsMakeRoom) {
  Fixture f(budget(1000, 600));
  const std::string old = f.add("10.0.0.1", 500 * kMB);
  f.now += std::chrono::seconds(599);
  ASSERT_FALSE(f.add("10.0.0.2", 400 * kMB).empty());
  EXPECT_EQ(f.sessions.check("10.0.0.2", 550 * kMB), Refusal::kServerFull) << "599 s unused is not idle yet";
  f.now += std::chrono::seconds(2);
  EXPECT_EQ(f.sessions.check("10.0.0.2", 550 * kMB), Refusal::kNone);
  ASSERT_FALSE(f.add("10.0.0.2", 550 * kMB).empty());
  EXPECT_EQ(f.sessions.find(old), nullptr) << "the session idle for 601 s made room";
  // Using a session keeps it from being idle.
  Fixture g(budget(1000, 600));
  const std::string used = g.add("10.0.0.1", 500 * kMB);
  g.now += std::chrono::seconds(590);
  ASSERT_NE(g.sessions.find(used), nullptr);
  g.now += std::chrono::seconds(20);
  ASSERT_FALSE(g.add("10.0.0.2", 400 * kMB).empty());
  EXPECT_EQ(g.sessions.check("10.0.0.2", 550 * kMB), Refusal::kServerFull);
}

TEST(TrackerSessions, ACountPerClientStillDropsItsOwnLeastRecentlyUsed) {
  Fixture f(budget(1000, 1000, 2));
  const std::string a = f.add("10.0.0.1", kMB), b = f.add("10.0.0.1", kMB), other = f.add("10.0.0.2", kMB);
  ASSERT_NE(f.sessions.find(a), nullptr);  // b is now the client's least recently used
  ASSERT_FALSE(f.add("10.0.0.1", kMB).empty());
  EXPECT_EQ(f.sessions.find(b), nullptr);
  EXPECT_NE(f.sessions.find(a), nullptr);
  EXPECT_NE(f.sessions.find(other), nullptr) << "another client's session counted against this client's number";
  f.sessions.remove(a);
  EXPECT_EQ(f.sessions.client_bytes("10.0.0.1"), kMB);
  EXPECT_EQ(f.sessions.bytes(), 2 * kMB);
}

}  // namespace
