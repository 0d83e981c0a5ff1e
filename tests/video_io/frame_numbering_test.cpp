// A new user's trial (session 18, finding 1): 17 damaged packets in the middle of an MP4 moved
// every later frame's index down by up to 17 (index 150 at 6.68 s, source frame 167), so DAVIS
// and MOTS files named the wrong frames. FrameNumbering keeps the source index.
#include <gtest/gtest.h>

#include "video_io/frame_numbering.h"

namespace {

using sam3::video_io::FrameNumbering;
using Runs = std::vector<std::pair<std::int64_t, std::int64_t>>;

// A stream of `count` packets `step` ticks apart; the packets in `damaged` give no frame and the
// decoder says so when it meets them. Returns the indices given.
std::vector<std::int64_t> number(FrameNumbering& n, const std::vector<std::int64_t>& times, const std::vector<size_t>& damaged) {
  std::vector<std::int64_t> indices;
  for (size_t i = 0; i < times.size(); ++i) {
    n.packet(times[i]);
    if (std::find(damaged.begin(), damaged.end(), i) != damaged.end()) {
      n.damaged();
      continue;
    }
    indices.push_back(n.frame(times[i]));
  }
  return indices;
}

std::vector<std::int64_t> ticks(std::vector<std::int64_t> t) { return t; }

TEST(FrameNumbering, FramesAfterDamagedPacketsKeepTheirSourceIndex) {
  std::vector<std::int64_t> times;
  for (int i = 0; i < 10; ++i) times.push_back(512 * i);
  FrameNumbering n(512);
  EXPECT_EQ(number(n, times, {3, 4, 7}), (std::vector<std::int64_t>{0, 1, 2, 5, 6, 8, 9}));
  EXPECT_EQ(n.finish(), 10);
  EXPECT_EQ(n.lost(), (Runs{{3, 4}, {7, 7}}));
  EXPECT_EQ(n.lost_frames(), 3);
}

TEST(FrameNumbering, AVariableRateIsNumberedByThePacketsTheContainerListed) {
  // Irregular times (a variable rate): no constant frame duration, the packets tell.
  const auto times = ticks({0, 40, 100, 130, 500, 520, 600, 1000});
  FrameNumbering n(0);
  EXPECT_EQ(number(n, times, {4}), (std::vector<std::int64_t>{0, 1, 2, 3, 5, 6, 7}));
  EXPECT_EQ(n.lost(), (Runs{{4, 4}}));
}

TEST(FrameNumbering, AnIntactVariableRateFileIsNumberedInOrderWhateverItsGaps) {
  // The trial's vfr.mkv: 0.1 s apart, then 3.1 s; the rate its first frames implied is 10.
  const auto times = ticks({0, 100, 200, 300, 4000, 5100, 5300});
  FrameNumbering n(100);
  EXPECT_EQ(number(n, times, {}), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(n.finish(), 7);
  EXPECT_TRUE(n.lost().empty());
}

TEST(FrameNumbering, AConstantRateCountsFramesTheDemuxerDroppedFromTheirTimes) {
  // MPEG-TS may drop a damaged packet itself: no packet tells, the gap in time does.
  FrameNumbering n(512);
  for (std::int64_t i : {0, 1, 2}) EXPECT_EQ(n.frame(512 * i), i);
  n.damaged();
  EXPECT_EQ(n.frame(512 * 6), 6);
  EXPECT_EQ(n.frame(512 * 7), 7);
  EXPECT_EQ(n.lost(), (Runs{{3, 5}}));
}

TEST(FrameNumbering, PacketsReadOutweighAConstantRateThatWasOnlyGuessed) {
  // The first frames 100 ticks apart (the rate FFmpeg guesses), a damaged one, then a pause of
  // 3 s: the packet read says one frame was lost, not 30.
  const auto times = ticks({0, 100, 200, 300, 3300, 3400});
  FrameNumbering n(100);
  EXPECT_EQ(number(n, times, {3}), (std::vector<std::int64_t>{0, 1, 2, 4, 5}));
  EXPECT_EQ(n.lost(), (Runs{{3, 3}}));
}

TEST(FrameNumbering, PacketsThatGiveNoFrameWithoutAnErrorShiftNothing) {
  // A hidden reference frame has a packet of its own and no picture: no error, no lost index.
  FrameNumbering n(0);
  n.packet(0);
  EXPECT_EQ(n.frame(0), 0);
  n.packet(10);  // hidden
  n.packet(20);
  EXPECT_EQ(n.frame(20), 1);
  EXPECT_TRUE(n.lost().empty());
}

TEST(FrameNumbering, DamagedPacketsAtTheEndAreLostFramesTooAndFramesWithoutTimesCount) {
  FrameNumbering n(0);
  n.packet(std::nullopt);
  EXPECT_EQ(n.frame(std::nullopt), 0);
  n.packet(10);
  EXPECT_EQ(n.frame(10), 1);
  n.packet(20);
  n.packet(30);
  n.damaged();
  EXPECT_EQ(n.finish(), 4);
  EXPECT_EQ(n.lost(), (Runs{{2, 3}}));
}

}  // namespace
