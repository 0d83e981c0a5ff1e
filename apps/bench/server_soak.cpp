// Soak test for `sam3 serve`: for a bounded time, several clients send a mix of good and
// hostile traffic (uploads, prompts, malformed JSON and images, wrong methods, missing keys,
// oversized and endless bodies, slow headers, dropped connections); the server's resident
// memory and open descriptors are sampled and /health is probed throughout. Prints a table
// per kind of request (answers as expected or not) and the samples. Loopback only.
#include <httplib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "sam3/base64.h"
#include "support/raw_http.h"

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;
using namespace std::chrono_literals;

struct Tally {
  std::atomic<long> sent{0}, expected{0}, unexpected{0};
};

long proc_value(int pid, const char* key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) == 0) return std::stol(line.substr(std::strlen(key)));
  }
  return -1;
}

long open_fds(int pid) {
  std::error_code ec;
  long n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sam3-soak: mixed good and hostile traffic against sam3 serve, memory sampled"};
  int port = 8080, pid = 0, clients = 6;
  double minutes = 30;
  std::string image_path;
  app.add_option("--port", port)->required();
  app.add_option("--pid", pid, "The server's process id (memory and descriptors are sampled)")->required();
  app.add_option("--image", image_path, "A valid image")->required()->check(CLI::ExistingFile);
  app.add_option("--minutes", minutes, "How long")->capture_default_str()->check(CLI::Range(0.05, 240.0));
  app.add_option("--clients", clients, "Concurrent clients")->capture_default_str()->check(CLI::Range(1, 64));
  CLI11_PARSE(app, argc, argv);

  std::ifstream in(image_path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string image = ss.str();

  std::map<std::string, Tally> tallies;
  const std::vector<std::string> kinds = {"upload",
                                          "segment cached",
                                          "segment inline",
                                          "bad json",
                                          "corrupt image",
                                          "wrong method",
                                          "unknown route",
                                          "announced 300 MB",
                                          "chunked flood",
                                          "slow headers",
                                          "dropped mid-body",
                                          "bad base64",
                                          "label studio predict",
                                          "label studio 2000 labels",
                                          "x-anylabeling predict",
                                          "x-anylabeling 2000 prompts",
                                          "labeling request abandoned"};
  for (const auto& k : kinds) tallies[k];
  std::mutex mutex;
  std::vector<double> health_ms;
  std::vector<long> rss_mb, fds;

  const auto deadline = Clock::now() + std::chrono::duration<double>(minutes * 60);
  std::atomic<bool> done{false};
  std::string id;
  {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(300, 0);
    auto r = c.Post("/v1/images", image, "application/octet-stream");
    if (!r || r->status != 200) {
      std::fprintf(stderr, "sam3-soak: the first upload failed\n");
      return 1;
    }
    id = json::parse(r->body)["image_id"];
  }

  // The labeling-tool routes: Label Studio's /predict (a data: URI task) and X-AnyLabeling's.
  const std::string data_uri = "data:image/png;base64," + sam3::base64_encode(image);
  const auto ls_predict = [&](const std::string& labels) {
    const std::string config =
        "<View><Image name=\"image\" value=\"$image\"/><BrushLabels name=\"b\" toName=\"image\">" + labels + "</BrushLabels></View>";
    return json{{"tasks", {{{"id", 1}, {"data", {{"image", data_uri}}}}}}, {"project", "1.1"}, {"label_config", config}}.dump();
  };
  std::string many_labels, many_texts;
  for (int i = 0; i < 2000; ++i) {
    many_labels += "<Label value=\"L" + std::to_string(i) + "\"/>";
    many_texts += "thing" + std::to_string(i) + ",";
  }
  const std::string ls_good = ls_predict("<Label value=\"Car\" predicted_values=\"red\"/><Label value=\"Sea\"/>");
  const std::string ls_many = ls_predict(many_labels);
  const auto xal_predict = [&](const std::string& texts) {
    return json{{"model", "segment_anything_3"}, {"image", sam3::base64_encode(image)}, {"params", {{"text_prompt", texts}}}}.dump();
  };
  const std::string xal_good = xal_predict("red,car"), xal_many = xal_predict(many_texts);

  const auto client_loop = [&](unsigned seed) {
    std::mt19937 rng(seed);
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(120, 0);
    while (Clock::now() < deadline) {
      const std::string& kind = kinds[rng() % kinds.size()];
      auto& t = tallies[kind];
      ++t.sent;
      bool ok = false;
      if (kind == "upload") {
        std::string varied = image;  // a new image now and then: the cache must stay bounded
        if (rng() % 4 == 0) varied += std::to_string(rng());
        auto r = c.Post("/v1/images", varied, "application/octet-stream");
        ok = r && r->status == 200;
      } else if (kind == "segment cached") {
        auto r = c.Post("/v1/segment", json{{"image_id", id}, {"prompts", {"red", "car"}}}.dump(), "application/json");
        ok = r && (r->status == 200 || r->status == 404);
      } else if (kind == "segment inline") {
        httplib::Client fresh("127.0.0.1", port);
        fresh.set_read_timeout(120, 0);
        const std::string b64 = sam3::base64_encode(image);
        auto r = fresh.Post("/v1/segment", json{{"image", b64}, {"prompts", {"blue"}}}.dump(), "application/json");
        ok = r && r->status == 200;
      } else if (kind == "bad json") {
        auto r = c.Post("/v1/segment", "{\"image_id\": [", "application/json");
        ok = r && r->status == 400;
      } else if (kind == "corrupt image") {
        auto r = c.Post("/v1/images", image.substr(0, image.size() / 3), "image/png");
        ok = r && r->status == 400;
      } else if (kind == "wrong method") {
        auto r = c.Get("/v1/segment");
        ok = r && r->status == 405;
      } else if (kind == "unknown route") {
        auto r = c.Get("/v2/" + std::to_string(rng()));
        ok = r && r->status == 404;
      } else if (kind == "bad base64") {
        auto r = c.Post("/v1/segment", R"({"image": "@@@not base64@@@", "prompts": ["x"]})", "application/json");
        ok = r && r->status == 400;
      } else if (kind == "label studio predict") {
        auto r = c.Post("/predict", ls_good, "application/json");
        ok = r && r->status == 200 && json::parse(r->body)["results"].size() == 1;
      } else if (kind == "label studio 2000 labels") {
        auto r = c.Post("/predict", ls_many, "application/json");
        ok = r && r->status == 413;
      } else if (kind == "x-anylabeling predict" || kind == "x-anylabeling 2000 prompts") {
        auto r = c.Post("/v1/predict", kind == "x-anylabeling predict" ? xal_good : xal_many, "application/json");
        ok = r && r->status == 200 && json::parse(r->body)["success"] == (kind == "x-anylabeling predict");
      } else {
        sam3::test::RawConnection raw(port);
        if (kind == "labeling request abandoned") {
          const std::string& body = rng() % 2 ? ls_good : xal_good;
          raw.send(std::string("POST ") + (&body == &ls_good ? "/predict" : "/v1/predict") +
                   " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                   "\r\n\r\n" + body);
          std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 200));
          ok = true;  // the client leaves; its work must not pile up
        } else if (kind == "announced 300 MB") {
          raw.send("POST /v1/images HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\nContent-Length: 314572800\r\n\r\n");
          ok = sam3::test::status_of(raw.receive(5s, "\r\n\r\n")) == 413;
        } else if (kind == "chunked flood") {
          raw.send("POST /v1/images HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\nTransfer-Encoding: chunked\r\n\r\n");
          const std::string chunk = "100000\r\n" + std::string(0x100000, 'x') + "\r\n";
          std::string answer;
          for (int i = 0; i < 200 && answer.empty() && raw.send(chunk); ++i) answer = raw.receive(5ms);
          if (answer.empty()) answer = raw.receive(2s);
          ok = sam3::test::status_of(answer) == 413;
        } else if (kind == "slow headers") {
          for (char ch : std::string("GET /health HTTP/1.1\r\n")) {
            raw.send(std::string(1, ch));
            std::this_thread::sleep_for(50ms);
          }
          ok = true;  // abandoned: the server must simply not suffer
        } else {      // dropped mid-body
          raw.send("POST /v1/images HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\nContent-Length: " +
                   std::to_string(image.size()) + "\r\n\r\n" + image.substr(0, image.size() / 2));
          ok = true;
        }
      }
      ++(ok ? t.expected : t.unexpected);
    }
  };

  std::thread sampler([&] {
    httplib::Client probe("127.0.0.1", port);
    probe.set_read_timeout(10, 0);
    while (!done) {
      const auto t0 = Clock::now();
      auto r = probe.Get("/health");
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      {
        std::lock_guard lock(mutex);
        health_ms.push_back(r && r->status == 200 ? ms : 1e9);
        rss_mb.push_back(proc_value(pid, "VmRSS:") / 1024);
        fds.push_back(open_fds(pid));
      }
      for (int i = 0; i < 20 && !done; ++i) std::this_thread::sleep_for(250ms);
    }
  });
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i) threads.emplace_back(client_loop, 1000u + static_cast<unsigned>(i));
  for (auto& t : threads) t.join();
  done = true;
  sampler.join();

  std::printf("\n| request | sent | answered as expected | not |\n|---|---:|---:|---:|\n");
  long bad = 0;
  for (const auto& k : kinds) {
    const auto& t = tallies[k];
    std::printf("| %s | %ld | %ld | %ld |\n", k.c_str(), t.sent.load(), t.expected.load(), t.unexpected.load());
    bad += t.unexpected;
  }
  const auto minmax = [](const std::vector<long>& v) {
    return v.empty() ? std::pair<long, long>{0, 0}
                     : std::pair{*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
  };
  const auto [rss_lo, rss_hi] = minmax(rss_mb);
  const auto [fd_lo, fd_hi] = minmax(fds);
  long failed_probes = std::count_if(health_ms.begin(), health_ms.end(), [](double v) { return v >= 1e9; });
  std::printf("\n| %.1f minutes, %d clients | value |\n|---|---:|\n", minutes, clients);
  std::printf("| server RSS MB: first / min / max / last | %ld / %ld / %ld / %ld |\n", rss_mb.empty() ? 0 : rss_mb.front(), rss_lo, rss_hi,
              rss_mb.empty() ? 0 : rss_mb.back());
  std::printf("| open descriptors: min / max / last | %ld / %ld / %ld |\n", fd_lo, fd_hi, fds.empty() ? 0 : fds.back());
  std::printf("| /health probes (every 5 s): count / unanswered | %zu / %ld |\n", health_ms.size(), failed_probes);
  std::printf("| /health ms: p50 / p99 / max answered | %.1f / %.1f / %.1f |\n", percentile(health_ms, 0.5), percentile(health_ms, 0.99),
              [&] {
                double m = 0;
                for (double v : health_ms)
                  if (v < 1e9) m = std::max(m, v);
                return m;
              }());
  return bad == 0 && failed_probes == 0 ? 0 : 1;
}
