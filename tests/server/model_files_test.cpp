// What `sam3 serve` answers under /models/ (the browser app's model, no key needed): only the
// files the loaded model was read from, streamed from disk so that neither a client that never
// reads nor a large file sizes the server's memory, under a deadline on progress (a slow client
// that keeps reading gets the whole file, one that stops is cut off).
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "support/files.h"
#include "support/raw_http.h"
#include "support/serve.h"
#include "support/server_process.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using sam3::test::RawConnection;
using sam3::test::ServerProcess;

const std::string kKey = "model-files-key";

// The osam test model (graphs with .onnx.data weights) with a tokenizer, in a folder that also
// holds what is not the model: notes, a copy of a graph in a subfolder, links to a folder and
// a file outside, a dot file. `pad_mb`: the decoder's weights file grown to this size (a
// sparse tail the graph never reads).
struct ModelFolder {
  fs::path root, dir, outside;
  explicit ModelFolder(std::uintmax_t pad_mb = 0) {
    root = sam3::test::fresh_test_dir("sam3_model_files");
    dir = root / "model";
    outside = root / "outside";
    fs::create_directories(dir / "sub");
    fs::create_directories(outside);
    for (const auto& e : fs::directory_iterator(sam3::test::test_models_dir() / "osam")) {
      if (e.is_regular_file()) fs::copy_file(e.path(), dir / e.path().filename());
    }
    fs::copy_file(sam3::test::test_models_dir() / "usls" / "tokenizer.json", dir / "tokenizer.json");
    fs::copy_file(dir / "sam3_decoder.onnx", dir / "sub" / "sam3_decoder.onnx");
    std::ofstream(dir / "notes.txt") << "the operator's notes";
    std::ofstream(dir / ".hidden") << "hidden";
    std::ofstream(outside / "secret.txt") << "outside the model folder";
    fs::create_directory_symlink(outside, dir / "elsewhere");
    fs::create_symlink(outside / "secret.txt", dir / "secret.onnx");
    if (pad_mb) fs::resize_file(dir / "sam3_decoder.onnx.data", pad_mb << 20);
  }
  ~ModelFolder() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
};

ServerProcess* serve(const ModelFolder& folder, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {SAM3_CLI_PATH, "serve", "--models", folder.dir.string(), "--port", "0", "--api-key", kKey};
  args.insert(args.end(), extra.begin(), extra.end());
  auto* server = new ServerProcess(args);
  if (server->port() > 0) sam3::test::wait_healthy(server->port());
  return server;
}

long rss_kb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// A client whose receive buffer is small (64 KB), so that how fast it reads is what the server
// sees, not how much the kernel takes for it.
class SlowReader {
 public:
  explicit SlowReader(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int small = 64 * 1024;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~SlowReader() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool get(const std::string& path) {
    const std::string req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    return fd_ >= 0 && ::send(fd_, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size());
  }
  // Reads until the server closes (or `limit` passes), `chunk` bytes at most every `pause`;
  // returns every byte received.
  std::uint64_t read_all(std::size_t chunk, std::chrono::milliseconds pause, std::chrono::seconds limit) {
    std::vector<char> buf(chunk);
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 1000) <= 0) continue;
      const ssize_t n = ::recv(fd_, buf.data(), buf.size(), 0);
      if (n <= 0) break;
      received_ += static_cast<std::uint64_t>(n);
      std::this_thread::sleep_for(pause);
    }
    return received_;
  }

 private:
  int fd_ = -1;
  std::uint64_t received_ = 0;
};

TEST(ModelFiles, OnlyWhatTheLoadedModelIsMadeOfIsServedWithoutTheKey) {
  ModelFolder folder;
  std::unique_ptr<ServerProcess> server(serve(folder));
  ASSERT_GT(server->port(), 0) << server->first_line();
  httplib::Client c("127.0.0.1", server->port());
  for (const char* name : {"sam3_image_encoder.onnx", "sam3_image_encoder.onnx.data", "sam3_language_encoder.onnx",
                           "sam3_language_encoder.onnx.data", "sam3_decoder.onnx", "sam3_decoder.onnx.data", "tokenizer.json"}) {
    const auto r = c.Get(std::string("/models/") + name);
    ASSERT_TRUE(r) << name;
    EXPECT_EQ(r->status, 200) << name << " is part of the model, and the page needs it without a key";
    EXPECT_EQ(r->body, sam3::test::read_file(folder.dir / name)) << name;
    const auto head = c.Head(std::string("/models/") + name);
    ASSERT_TRUE(head);
    EXPECT_EQ(head->status, 200) << name;
    EXPECT_EQ(head->get_header_value("Content-Length"), std::to_string(fs::file_size(folder.dir / name))) << name;
  }
  const auto part = c.Get("/models/sam3_decoder.onnx.data", {{"Range", "bytes=5-20"}});
  ASSERT_TRUE(part);
  EXPECT_EQ(part->status, 206);
  EXPECT_EQ(part->body, sam3::test::read_file(folder.dir / "sam3_decoder.onnx.data").substr(5, 16));
  for (const char* path :
       {"/models/notes.txt", "/models/sub/sam3_decoder.onnx", "/models/elsewhere/secret.txt", "/models/secret.onnx", "/models/.hidden",
        "/models/sub/", "/models/elsewhere", "/models/sam3_decoder.onnx/../notes.txt", "/models/%6eotes.txt"}) {
    const auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 404) << path << " is not part of the model: " << r->body.substr(0, 100);
    EXPECT_EQ(r->body.find("notes"), std::string::npos) << path;
    EXPECT_EQ(r->body.find("outside the model folder"), std::string::npos) << path;
  }
  EXPECT_EQ(server->stop(SIGTERM), 0);
}

TEST(ModelFiles, ClientsThatNeverReadHoldNoFileInTheServersMemory) {
  ModelFolder folder(64);  // a 64 MB weights file
  std::unique_ptr<ServerProcess> server(serve(folder));
  ASSERT_GT(server->port(), 0) << server->first_line();
  httplib::Client c("127.0.0.1", server->port());
  ASSERT_EQ(c.Get("/models/tokenizer.json")->status, 200);  // the route's first use, before the baseline
  const long before = rss_kb(server->pid());
  std::vector<RawConnection> clients;
  for (int i = 0; i < 6; ++i) {
    clients.emplace_back(server->port());
    const std::string range = i % 2 ? "Range: bytes=1000-\r\n" : "";
    ASSERT_TRUE(clients.back().send("GET /models/sam3_decoder.onnx.data HTTP/1.1\r\nHost: 127.0.0.1\r\n" + range + "\r\n"));
  }
  // Each answer has begun (its headers arrived): the server has done what it does per request.
  for (auto& client : clients) {
    const std::string head = client.receive(30s, "\r\n\r\n");
    EXPECT_NE(head.find("HTTP/1.1 20"), std::string::npos) << head.substr(0, 200);
  }
  std::this_thread::sleep_for(300ms);
  const long grown_mb = (rss_kb(server->pid()) - before) / 1024;
  // Holding each file whole was 6 x 64 MB (384 MB); read a piece at a time it is a few MB.
  EXPECT_LT(grown_mb, 64) << "six clients that read nothing of a 64 MB file grew the server by " << grown_mb << " MB";
  std::printf("six stalled 64 MB downloads grew the server by %ld MB\n", grown_mb);
  clients.clear();
  EXPECT_EQ(server->stop(SIGTERM), 0);
}

TEST(ModelFiles, ASlowClientThatKeepsReadingGetsTheWholeFileAndAStalledOneIsCutOff) {
  ModelFolder folder(32);  // a 32 MB weights file
  const std::uint64_t size = fs::file_size(folder.dir / "sam3_decoder.onnx.data");
  std::unique_ptr<ServerProcess> server(serve(folder, {"--write-timeout", "3"}));
  ASSERT_GT(server->port(), 0) << server->first_line();
  SlowReader slow(server->port()), stalled(server->port());
  ASSERT_TRUE(slow.get("/models/sam3_decoder.onnx.data"));
  ASSERT_TRUE(stalled.get("/models/sam3_decoder.onnx.data"));
  std::uint64_t stalled_got = 0;
  std::thread stalling([&] {
    std::this_thread::sleep_for(9s);  // three write deadlines without reading a byte
    stalled_got = stalled.read_all(1 << 20, 0ms, 30s);
  });
  // 64 KB every 20 ms (about 3 MB/s): some 10 s for the file, over three times the deadline;
  // a deadline on the whole answer cut it after 3 s (about 9 MB read, 4 MB in the kernel's buffers).
  const std::uint64_t slow_got = slow.read_all(64 * 1024, 20ms, 120s);
  stalling.join();
  EXPECT_GT(slow_got, size) << "the slow client got " << slow_got << " of " << size << " bytes and headers";
  EXPECT_LT(stalled_got, size / 2) << "a client that stopped reading for three deadlines was not cut off";
  EXPECT_EQ(server->stop(SIGTERM), 0);
}

}  // namespace
