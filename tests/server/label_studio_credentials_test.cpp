// Label Studio credentials go only where the operator (or Label Studio itself, with its own
// token) said: a client's /setup cannot redirect the operator's key, nor inherit another
// project's token, nor receive an access token Label Studio issued to another origin.
#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "sam3/base64.h"
#include "sam3/export.h"
#include "support/serve.h"
#include "support/server_process.h"
#include "support/stand_in.h"
#include "support/test_images.h"

namespace {

using nlohmann::json;
using sam3::test::ServerProcess;
using sam3::test::StandIn;

const std::string kOperatorKey = "0perat0rkey0123456789abcdef0123456789abcd";
const std::string kProjectToken = "pr0jecttoken0123456789abcdef0123456789ab";
// A personal access token and the access token Label Studio gives for it.
const std::string kPat = "eyJhbGciOiJIUzI1NiJ9.eyJ0b2tlbl90eXBlIjoicmVmcmVzaCJ9.c2lnbmF0dXJl";
const std::string kAccess = "eyJhbGciOiJIUzI1NiJ9.eyJ0b2tlbl90eXBlIjoiYWNjZXNzIn0.YWNjZXNz";

const char* kConfig = R"(<View><Image name="image" value="$image"/>
  <BrushLabels name="brush" toName="image"><Label value="Car" predicted_values="red"/></BrushLabels></View>)";

// A host serving the scene at Label Studio's upload path to anyone (a hostile one would), and
// exchanging the personal access token, recording every Authorization header it is sent.
std::unique_ptr<StandIn> image_host(bool needs_token, const std::string& access = kAccess) {
  auto host = std::make_unique<StandIn>();
  const std::string png = sam3::encode_rgb_png(sam3::test::make_scene(false).image);
  host->http().Get("/data/upload/1/scene.png", [png, needs_token](const httplib::Request& req, httplib::Response& res) {
    const auto a = req.get_header_value("Authorization");
    if (needs_token && a != "Token " + kOperatorKey && a != "Token " + kProjectToken && a != "Bearer " + kAccess) {
      res.status = 401;
      return;
    }
    res.set_content(png, "image/png");
  });
  host->http().Post("/api/token/refresh/", [access](const httplib::Request& req, httplib::Response& res) {
    const auto body = json::parse(req.body, nullptr, false);
    if (body.is_object() && body.value("refresh", "") == kPat)
      res.set_content(json{{"access", access}}.dump(), "application/json");
    else
      res.status = 401;
  });
  host->start();
  return host;
}

httplib::Result post(ServerProcess& server, const std::string& path, const json& body) {
  httplib::Client c("127.0.0.1", server.port());
  c.set_read_timeout(60, 0);
  return c.Post(path, body.dump(), "application/json");
}

void setup(ServerProcess& server, const std::string& project, const std::string& hostname, const std::string& token) {
  json body = {{"project", project}, {"schema", kConfig}, {"hostname", hostname}, {"model_version", nullptr}};
  if (!token.empty()) body["access_token"] = token;
  auto r = post(server, "/setup", body);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
}

// The status of a /predict of one uploaded task in `project`.
int predict(ServerProcess& server, const std::string& project, std::string* body = nullptr) {
  json task = {{"id", 1}, {"data", {{"image", "/data/upload/1/scene.png"}}}};
  auto r = post(server, "/predict",
                {{"tasks", json::array({task})}, {"project", project}, {"label_config", kConfig}, {"params", {{"context", nullptr}}}});
  if (!r) return 0;
  if (body) *body = r->body;
  return r->status;
}

// Every Authorization header `host` was sent, and POSTed personal access tokens.
std::vector<std::string> tokens_seen(StandIn& host) {
  std::vector<std::string> out;
  for (const auto& s : host.seen()) {
    if (!s.authorization.empty()) out.push_back(s.path + ": " + s.authorization);
  }
  return out;
}

bool exchanged_at(StandIn& host) {
  for (const auto& s : host.seen()) {
    if (s.path == "/api/token/refresh/") return true;
  }
  return false;
}

TEST(LabelStudioCredentials, TheOperatorsKeyNeverGoesToAHostASetupNames) {
  auto evil = image_host(false);
  std::unique_ptr<ServerProcess> server(sam3::test::start_serve("usls", {"--label-studio-api-key", kOperatorKey}));
  setup(*server, "1.1700000000", evil->url(), "");
  std::string body;
  EXPECT_EQ(predict(*server, "1.1700000000", &body), 200) << "the host /setup named serves without a token: " << body;
  EXPECT_TRUE(tokens_seen(*evil).empty()) << "the operator's key (or anything) reached " << evil->url() << ": "
                                          << ::testing::PrintToString(tokens_seen(*evil));

  // With a personal access token as the key it must not even be offered for exchange there.
  std::unique_ptr<ServerProcess> pat(sam3::test::start_serve("usls", {"--label-studio-api-key", kPat}));
  auto evil2 = image_host(true);
  setup(*pat, "2.1700000000", evil2->url(), "");
  EXPECT_EQ(predict(*pat, "2.1700000000", &body), 502) << body;
  EXPECT_NE(body.find("LABEL_STUDIO_URL"), std::string::npos) << "the error says the key goes only to LABEL_STUDIO_URL: " << body;
  EXPECT_FALSE(exchanged_at(*evil2)) << "the personal access token was posted to a host /setup named";
  EXPECT_TRUE(tokens_seen(*evil2).empty()) << ::testing::PrintToString(tokens_seen(*evil2));
}

TEST(LabelStudioCredentials, AConfiguredKeyGoesOnlyToTheConfiguredUrl) {
  auto ls = image_host(true);
  auto evil = image_host(false);
  std::unique_ptr<ServerProcess> server(
      sam3::test::start_serve("usls", {"--label-studio-url", ls->url(), "--label-studio-api-key", kOperatorKey}));
  setup(*server, "1.1700000000", evil->url(), "evil-does-not-matter");
  std::string body;
  EXPECT_EQ(predict(*server, "1.1700000000", &body), 200) << body;
  EXPECT_TRUE(evil->seen().empty()) << "a /setup moved the configured Label Studio elsewhere";
  ASSERT_FALSE(tokens_seen(*ls).empty());
  EXPECT_EQ(tokens_seen(*ls).front(), "/data/upload/1/scene.png: Token " + kOperatorKey);
}

TEST(LabelStudioCredentials, AHostAndItsTokenAreOnePairPerProject) {
  auto ls = image_host(true);
  auto evil = image_host(false);
  std::unique_ptr<ServerProcess> server(sam3::test::start_serve("usls"));
  setup(*server, "1.1700000000", ls->url(), kProjectToken);
  setup(*server, "2.1700000000", evil->url(), "");  // a new host, no token: it inherits none
  std::string body;
  EXPECT_EQ(predict(*server, "2.1700000000", &body), 200) << body;
  EXPECT_TRUE(tokens_seen(*evil).empty()) << "project 1's token reached project 2's host: " << ::testing::PrintToString(tokens_seen(*evil));
  EXPECT_EQ(predict(*server, "1.1700000000", &body), 200) << "project 1 keeps its own pair: " << body;
  ASSERT_FALSE(tokens_seen(*ls).empty());
  EXPECT_EQ(tokens_seen(*ls).back(), "/data/upload/1/scene.png: Token " + kProjectToken);
}

TEST(LabelStudioCredentials, AnAccessTokenGoesBackOnlyToTheOriginThatIssuedIt) {
  auto ls = image_host(true);
  auto evil = image_host(false, "evils-own-access-token");
  std::unique_ptr<ServerProcess> server(sam3::test::start_serve("usls"));
  setup(*server, "1.1700000000", ls->url(), kPat);
  std::string body;
  EXPECT_EQ(predict(*server, "1.1700000000", &body), 200) << body;
  EXPECT_TRUE(exchanged_at(*ls));
  setup(*server, "2.1700000000", evil->url(), kPat);  // the same token, for another host
  EXPECT_EQ(predict(*server, "2.1700000000", &body), 200) << body;
  for (const auto& seen : tokens_seen(*evil)) {
    EXPECT_EQ(seen.find(kAccess), std::string::npos) << "the access token " << ls->url() << " issued reached " << evil->url();
  }
}

// A token is one header value: one holding a line break would add headers (or a whole second
// request) of the client's choosing to what sam3 sends the operator's Label Studio.
TEST(LabelStudioCredentials, ATokenThatWouldAddHeadersIsRefused) {
  auto ls = image_host(false);
  std::unique_ptr<ServerProcess> server(sam3::test::start_serve("usls", {"--label-studio-url", ls->url()}));
  for (const std::string& token :
       std::vector<std::string>{"tok\r\nX-Injected: yes", "tok\nX-Injected: yes", std::string("tok\0X", 5), "tok en"}) {
    json body = {{"project", "1.1700000000"}, {"schema", kConfig}, {"hostname", ls->url()}, {"access_token", token}};
    auto r = post(*server, "/setup", body);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << ::testing::PrintToString(token) << ": " << r->body;
    EXPECT_NE(r->body.find("access_token"), std::string::npos) << r->body;
    predict(*server, "1.1700000000");
  }
  for (const auto& s : ls->seen()) {
    EXPECT_FALSE(s.headers.count("X-Injected")) << "a header the client wrote reached Label Studio at " << s.path;
    EXPECT_EQ(s.authorization.find("tok"), std::string::npos) << s.path << ": " << s.authorization;
  }
}

}  // namespace
