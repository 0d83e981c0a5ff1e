// Base64 (sam3/base64.h): RFC 4648's vectors both ways, the "data:" prefix and line breaks the
// server's clients send, and anything else outside the alphabet refused.
#include <gtest/gtest.h>

#include "sam3/base64.h"

namespace {

TEST(Base64, Rfc4648VectorsBothWays) {
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(sam3::base64_encode(plain), encoded) << plain;
    EXPECT_EQ(sam3::base64_decode(encoded), plain) << encoded;
  }
  const std::string bytes("\x00\xff\x10\x80", 4);
  EXPECT_EQ(sam3::base64_decode(sam3::base64_encode(bytes)), bytes);
}

TEST(Base64, DataUrlsAndLineBreaksAreRead) {
  EXPECT_EQ(sam3::base64_decode("data:image/png;base64,Zm9v"), "foo");
  EXPECT_EQ(sam3::base64_decode("Zm9v\r\nYmFy"), "foobar");
  EXPECT_FALSE(sam3::base64_decode("data:image/png;base64"));  // no comma: no payload
}

TEST(Base64, CharactersOutsideTheAlphabetAreRefused) {
  for (const char* text : {"Zm9v!", "Zm 9v", "Zm9v\t", "Zm-9"}) EXPECT_FALSE(sam3::base64_decode(text)) << text;
}

}  // namespace
