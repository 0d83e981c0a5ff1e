// The error table: every code has a distinct name and Python class, a documented exit code and
// an HTTP status that is never a success, and bad input is a 4xx (never 500).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "sam3/error.h"

namespace {

TEST(ErrorTable, EveryCodeHasItsOwnRowInEnumOrder) {
  std::set<std::string> names, classes;
  int index = 0;
  for (const auto* t = sam3::error_traits_begin(); t != sam3::error_traits_end(); ++t, ++index) {
    EXPECT_EQ(static_cast<int>(t->code), index) << t->name << " is out of enum order";
    EXPECT_EQ(&sam3::error_traits(t->code), t) << t->name;
    EXPECT_TRUE(names.insert(t->name).second) << "duplicate name " << t->name;
    EXPECT_TRUE(classes.insert(t->python_exception).second) << "duplicate Python class " << t->python_exception;
    EXPECT_GE(t->exit_code, 3) << t->name << ": 0-2 are success, partial failure and usage";
    EXPECT_TRUE(t->exit_code <= 7 || t->exit_code == 130) << t->name << ": the README documents 3-7 and 130 (interrupted)";
    EXPECT_GE(t->http_status, 400) << t->name;
    EXPECT_LT(t->http_status, 600) << t->name;
  }
  EXPECT_EQ(index, static_cast<int>(sam3::ErrorCode::kCancelled) + 1);
}

TEST(ErrorTable, BadInputIsAClientErrorEverywhere) {
  for (auto code : {sam3::ErrorCode::kInvalidArgument, sam3::ErrorCode::kInvalidText, sam3::ErrorCode::kImageUnreadable,
                    sam3::ErrorCode::kImageUnsupported, sam3::ErrorCode::kImageCorrupt, sam3::ErrorCode::kImageTooLarge}) {
    const auto& t = sam3::error_traits(code);
    EXPECT_EQ(t.exit_code, 3) << t.name;
    EXPECT_LT(t.http_status, 500) << t.name;
  }
  EXPECT_STREQ(sam3::error_code_name(sam3::ErrorCode::kImageTooLarge), "image_too_large");
  EXPECT_EQ(sam3::error_traits(sam3::ErrorCode::kImageTooLarge).http_status, 413);
}

}  // namespace
