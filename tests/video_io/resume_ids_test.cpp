// Ids across a resumed run: re-run objects take the ids of the written objects they overlap.
#include "video_io/resume_ids.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sam3/mask_encodings.h"

namespace {

using sam3::video_io::ResumeIds;
constexpr int kW = 20, kH = 10;

sam3::TrackedObject box_object(int id, int x0, int x1) {
  sam3::TrackedObject o;
  o.id = id;
  std::vector<std::uint8_t> raster(kW * kH, 0);
  for (int y = 2; y < 8; ++y) {
    for (int x = x0; x < x1; ++x) raster[y * kW + x] = 1;
  }
  o.mask = sam3::Mask::from_raster(kW, kH, raster);
  o.box = {float(x0), 2, float(x1 - 1), 7};
  return o;
}

// A record line as the JSON sink writes it.
std::string line(std::int64_t index, const std::vector<sam3::TrackedObject>& objects) {
  nlohmann::json j = {{"index", index}, {"time_s", index / 10.0}, {"objects", nlohmann::json::array()}};
  for (const auto& o : objects) {
    j["objects"].push_back({{"id", o.id},
                            {"score", 0.5},
                            {"box", {o.box.x0, o.box.y0, o.box.x1, o.box.y1}},
                            {"mask", {{"size", {kH, kW}}, {"counts", sam3::rle_encode(o.mask)}}}});
  }
  return j.dump();
}

TEST(ResumeIds, ReRunObjectsTakeTheIdsOfTheWrittenOnesTheyOverlap) {
  ResumeIds ids({line(5, {box_object(1, 0, 6), box_object(4, 10, 16)}), line(6, {box_object(1, 1, 7), box_object(4, 11, 17)})}, "record",
                4);
  // The re-run tracker calls them 2 (on the right) and 1 (on the left), and sees a new one, 3.
  ids.observe({5, 0.5, {box_object(1, 10, 16), box_object(2, 0, 6)}});
  ids.observe({6, 0.6, {box_object(1, 11, 17), box_object(2, 1, 7), box_object(3, 18, 20)}});
  EXPECT_EQ(ids.map(1), 4);
  EXPECT_EQ(ids.map(2), 1);
  EXPECT_EQ(ids.map(3), 5) << "no match: the next id after every written one";
  EXPECT_EQ(ids.map(9), 6);
  EXPECT_EQ(ids.map(3), 5) << "a fresh id stays";
}

TEST(ResumeIds, ALowOverlapIsNoMatch) {
  ResumeIds ids({line(5, {box_object(1, 0, 6)})}, "record", 1);
  ids.observe({5, 0.5, {box_object(7, 4, 10)}});  // IoU 2/10
  EXPECT_EQ(ids.map(7), 2);
}

TEST(ResumeIds, WithoutAReRunFrameIdsPassThrough) {
  ResumeIds ids({line(5, {box_object(1, 0, 6)})}, "record", 1);
  ids.observe({9, 0.9, {box_object(1, 0, 6)}});  // not a written frame of the window
  EXPECT_EQ(ids.map(1), 1);
  EXPECT_EQ(ids.map(3), 3);
}

TEST(ResumeIds, MaskIou) {
  EXPECT_DOUBLE_EQ(sam3::video_io::mask_iou(box_object(1, 0, 6).mask, box_object(2, 3, 9).mask), 3.0 / 9.0);
  EXPECT_DOUBLE_EQ(sam3::video_io::mask_iou(box_object(1, 0, 0).mask, box_object(2, 0, 0).mask), 0.0);
}

}  // namespace
