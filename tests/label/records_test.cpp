// The files `sam3 label` reads back (records, config.json, inputs.json, map shards and tiles):
// one instance codec for all, and a damaged file is a clear error naming it, never a crop
// outside its image, an index out of range or an exception from the JSON parser.
#include <gtest/gtest.h>

#include <fstream>

#include "label/instance_record.h"
#include "label/records.h"
#include "sam3/error.h"
#include "support/error_code.h"
#include "support/files.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

sam3::label::LabeledInstance square(int x0, int y0, int side, int width, int height) {
  sam3::label::LabeledInstance inst;
  inst.category = 1;
  inst.score = 0.75f;
  inst.box = {float(x0), float(y0), float(x0 + side), float(y0 + side)};
  inst.mask = {x0, y0, side, side, width, height, std::vector<std::uint8_t>(side * side, 1)};
  return inst;
}

TEST(InstanceRecord, RoundTripsAnInstanceExactly) {
  const auto inst = square(3, 2, 4, 20, 10);
  const json record = json::parse(sam3::label::instance_record_json(inst).dump());
  const auto back = sam3::label::instance_from_record(record, 20, 10, 2);
  EXPECT_EQ(back.category, 1);
  EXPECT_FLOAT_EQ(back.score, 0.75f);
  EXPECT_EQ(back.mask.x0, 3);
  EXPECT_EQ(back.mask.y0, 2);
  EXPECT_EQ(back.mask.width, 4);
  EXPECT_EQ(back.mask.full_width, 20);
  EXPECT_EQ(back.mask.data, inst.mask.data);
}

TEST(InstanceRecord, ADamagedRecordIsRefusedBeforeAnyPixelIsTouched) {
  const json good = json::parse(sam3::label::instance_record_json(square(3, 2, 4, 20, 10)).dump());
  const auto refused = [&](const char* field, const json& value, const std::string& words) {
    json bad = good;
    bad[field] = value;
    try {
      sam3::label::instance_from_record(bad, 20, 10, 2);
      ADD_FAILURE() << field << " = " << value.dump() << " was accepted";
    } catch (const sam3::Error& e) {
      EXPECT_EQ(e.code(), sam3::ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused("crop", json::array({18, 2, 4, 4}), "crop width");  // past the right edge: writers index out of the image
  refused("crop", json::array({-1, 2, 4, 4}), "crop x");
  refused("crop", json::array({3, 2}), "\"crop\" is not");           // read past its end before
  refused("crop", json::array({4294967299ULL, 2, 4, 4}), "crop x");  // narrowed to 3 before
  refused("category", 2, "category");                                // only two categories
  refused("category", -1, "category");
  refused("score", "high", "score");
  refused("box", json::array({0, 0, 1}), "box");
  refused("counts", 5, "counts");
  refused("counts", "04", "its counts");  // four pixels for a 4x4 crop
}

TEST(LabelRecords, ADamagedRecordOrListIsNamedNotAParserException) {
  const auto out = sam3::test::fresh_test_dir("sam3_records");
  fs::create_directories(out / "items");
  std::ofstream(out / "inputs.json") << R"(["a.png", 7])";
  EXPECT_EQ(sam3::test::code_of([&] { sam3::label::read_input_names(out); }), sam3::ErrorCode::kInvalidArgument);
  std::ofstream(out / "config.json") << R"({"hash": 5})";
  EXPECT_EQ(sam3::test::code_of([&] { sam3::label::read_config(out); }), sam3::ErrorCode::kInvalidArgument);
  // A record of this configuration whose instance reaches outside its 8x8 image.
  json record = {{"name", "a.png"}, {"path", "/x/a.png"},
                 {"width", 8},      {"height", 8},
                 {"config", "h"},   {"instances", {json::parse(sam3::label::instance_record_json(square(6, 6, 4, 20, 10)).dump())}}};
  std::ofstream(out / "items" / (sam3::label::record_key("a.png") + ".json")) << record.dump();
  try {
    sam3::label::read_items(out, "h", {"a.png"}, 2);
    ADD_FAILURE() << "a crop outside its image was read";
  } catch (const sam3::Error& e) {
    EXPECT_NE(std::string(e.what()).find(sam3::label::record_key("a.png") + ".json"), std::string::npos) << e.what();
  }
  record["config"] = 12;  // another type where a string belongs: not this configuration's, no exception
  std::ofstream(out / "items" / (sam3::label::record_key("a.png") + ".json")) << record.dump();
  EXPECT_TRUE(sam3::label::read_items(out, "h", {"a.png"}, 2).empty());
}

}  // namespace
