// The family registry (src/pure/families.h) is the one list of text-prompted families: every
// row has a unique id, a generated test model that loads as that family, file names no other
// family's required set hides, and the browser module's type union lists exactly its rows.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "pure/families.h"
#include "pure/tracker_names.h"
#include "pure/layout_names.h"
#include "sam3/model.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;

fs::path source_dir() { return fs::path(SAM3_TEST_DATA_DIR).parent_path().parent_path(); }

TEST(FamilyTable, IdsAndDisplayNamesAreUniqueAndEveryRowHasItsParts) {
  std::set<std::string> ids, displays;
  for (const auto& row : sam3::pure::families()) {
    EXPECT_TRUE(ids.insert(row.id).second) << "duplicate id " << row.id;
    EXPECT_TRUE(displays.insert(row.display).second) << "duplicate display name " << row.display;
    EXPECT_TRUE(std::regex_match(std::string(row.id), std::regex("[a-z0-9.-]+"))) << row.id;
    EXPECT_NE(row.build, nullptr) << row.id;
    std::set<std::string> parts;
    for (const auto& part : row.parts) {
      EXPECT_FALSE(part.stems.empty()) << row.id << " " << part.part;
      parts.insert(part.part);
    }
    EXPECT_TRUE(parts.contains("image") && parts.contains("decoder")) << row.id;
    EXPECT_EQ(sam3::pure::find_family(row.id), &row);
  }
  EXPECT_FALSE(ids.contains("sam3-tracker")) << "the interactive model's id is its own";
  EXPECT_EQ(sam3::pure::find_family("no-such-family"), nullptr);
}

// Video tracking is a capability of a family's row, not a layout id the tracker compares: the
// row names its graphs, constants and their check, and Model::tracks_video() (what the tracker,
// the CLI and the CVAT tracker ask) follows it.
TEST(FamilyTable, VideoIsACapabilityOfTheFamilyRow) {
  int video_rows = 0;
  for (const auto& row : sam3::pure::families()) {
    EXPECT_EQ(sam3::pure::video_capability(row.id), row.video) << row.id;
    if (!row.video) continue;
    ++video_rows;
    EXPECT_FALSE(row.video->graphs.empty()) << row.id;
    EXPECT_FALSE(row.video->constants.empty()) << row.id;
    EXPECT_NE(row.video->check, nullptr) << row.id;
    EXPECT_NE(sam3::pure::video_families_description().find(row.display), std::string::npos) << row.id;
  }
  EXPECT_EQ(video_rows, 1) << "SAM 3.1 (ailia) is the one family that tracks video";
  EXPECT_EQ(sam3::pure::video_capability("sam3-tracker"), nullptr) << "the interactive model tracks no video";
  const auto models = sam3::test::test_models_dir();
  EXPECT_TRUE(sam3::Model::load(models / "sam3.1-video")->tracks_video());
  EXPECT_FALSE(sam3::Model::load(models / "usls")->tracks_video());
  EXPECT_FALSE(sam3::Model::load(models / "tracker")->tracks_video());
}

// tools/make_test_models.py --layout ID writes each row's model into the test models' ID folder.
TEST(FamilyTable, EveryRowHasAGeneratedTestModelThatLoadsAsIt) {
  for (const auto& row : sam3::pure::families()) {
    const auto dir = sam3::test::test_models_dir() / row.id;
    ASSERT_TRUE(fs::is_directory(dir)) << "no generated test model for family " << row.id << " at " << dir;
    const auto model = sam3::Model::load(dir);
    EXPECT_EQ(model->layout(), sam3::Layout(row.id)) << row.id;
    EXPECT_STREQ(sam3::layout_name(model->layout()), row.id);
    EXPECT_FALSE(model->quirks().empty()) << row.id;
    // Its files, by name alone, choose this family first or among the candidates.
    std::set<std::string> names;
    for (const auto& where : {dir, dir / "onnx"}) {
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(where, ec)) names.insert(e.path().filename().string());
    }
    const auto chosen = sam3::pure::choose_files(dir.string(), names);
    ASSERT_TRUE(chosen.has_value()) << row.id;
    bool among = false;
    for (const auto* f : chosen->families) among = among || f == &row;
    EXPECT_TRUE(among) << row.id << " is not chosen for its own files";
  }
}

// The browser module's Sam3Model.layout type lists exactly the rows the browser runs.
TEST(FamilyTable, TheBrowserTypeUnionIsTheTable) {
  std::ifstream in(source_dir() / "apps" / "web" / "sam3-browser.d.ts");
  ASSERT_TRUE(in) << "apps/web/sam3-browser.d.ts";
  std::stringstream text;
  text << in.rdbuf();
  std::smatch m;
  const std::string s = text.str();
  ASSERT_TRUE(std::regex_search(s, m, std::regex(R"(readonly layout:\s*([^;]+);)"))) << "no `readonly layout: ...;` in the .d.ts";
  std::set<std::string> in_dts;
  const std::string union_text = m[1];
  const std::regex quoted(R"re("([^"]+)")re");
  for (std::sregex_iterator it(union_text.begin(), union_text.end(), quoted), end; it != end; ++it) {
    in_dts.insert((*it)[1]);
  }
  std::set<std::string> in_table;
  for (const auto& row : sam3::pure::families()) {
    if (row.browser) in_table.insert(row.id);
  }
  in_table.insert(sam3::pure::kTrackerLayout);  // the interactive model, not a text family, runs there too
  EXPECT_EQ(in_dts, in_table);
}

// README's generations table names every family.
TEST(FamilyTable, TheReadmeNamesEveryFamily) {
  std::ifstream in(source_dir() / "README.md");
  std::stringstream text;
  text << in.rdbuf();
  for (const auto& row : sam3::pure::families()) {
    EXPECT_NE(text.str().find(row.display), std::string::npos) << "README.md does not name " << row.display;
  }
}

}  // namespace
