// Load test for `sam3 serve`: uploads one image, then sends prompt requests against its
// cached embedding from C connections, bounded by a request count and a time limit, and
// prints requests per second and latency percentiles. Loopback addresses only.
#include <httplib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

int main(int argc, char** argv) {
  CLI::App app{"sam3-load: requests/s and latency of POST /v1/segment on a cached image"};
  std::string host = "127.0.0.1", image_path, api_key;
  int port = 8080, requests = 200, concurrency = 4;
  double max_seconds = 30;
  std::vector<std::string> prompts = {"car"};
  app.add_option("--host", host, "Server address (loopback only)")->capture_default_str();
  app.add_option("--port", port)->capture_default_str();
  app.add_option("--image", image_path, "Image to upload once")->required()->check(CLI::ExistingFile);
  app.add_option("--prompt", prompts, "Prompt text (repeatable; one per request, round robin)");
  app.add_option("--requests", requests, "Total requests")->capture_default_str()->check(CLI::Range(1, 100000));
  app.add_option("--concurrency", concurrency, "Parallel connections")->capture_default_str()->check(CLI::Range(1, 64));
  app.add_option("--max-seconds", max_seconds, "Stop sending after this long")->capture_default_str();
  app.add_option("--api-key", api_key);
  CLI11_PARSE(app, argc, argv);
  if (host != "localhost" && host.rfind("127.", 0) != 0 && host != "::1") {
    std::fprintf(stderr, "sam3-load: refusing %s: load tests target loopback addresses only\n", host.c_str());
    return 2;
  }
  httplib::Headers headers;
  if (!api_key.empty()) headers.emplace("Authorization", "Bearer " + api_key);

  std::ifstream in(image_path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  httplib::Client setup(host, port);
  setup.set_read_timeout(300, 0);
  auto up = setup.Post("/v1/images", headers, bytes.str(), "application/octet-stream");
  if (!up || up->status != 200) {
    std::fprintf(stderr, "sam3-load: upload failed: %s\n", up ? up->body.c_str() : "no connection");
    return 1;
  }
  const std::string id = nlohmann::json::parse(up->body)["image_id"];

  std::atomic<int> next{0}, errors{0};
  std::mutex mutex;
  std::vector<double> latencies;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(max_seconds);
  std::vector<std::thread> threads;
  for (int c = 0; c < concurrency; ++c) {
    threads.emplace_back([&] {
      httplib::Client client(host, port);
      client.set_read_timeout(300, 0);
      for (int i; (i = next++) < requests && std::chrono::steady_clock::now() < deadline;) {
        const nlohmann::json body = {{"image_id", id}, {"prompts", {prompts[static_cast<size_t>(i) % prompts.size()]}}};
        const auto t0 = std::chrono::steady_clock::now();
        auto r = client.Post("/v1/segment", headers, body.dump(), "application/json");
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (!r || r->status != 200) {
          ++errors;
          continue;
        }
        std::lock_guard lock(mutex);
        latencies.push_back(ms);
      }
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::sort(latencies.begin(), latencies.end());
  auto pct = [&](double p) {
    return latencies.empty() ? 0.0 : latencies[std::min(latencies.size() - 1, static_cast<size_t>(p * latencies.size()))];
  };
  std::printf("| requests | errors | concurrency | req/s | p50 ms | p90 ms | p99 ms | max ms |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::printf("| %zu | %d | %d | %.1f | %.1f | %.1f | %.1f | %.1f |\n", latencies.size(), errors.load(), concurrency,
              latencies.size() / seconds, pct(0.50), pct(0.90), pct(0.99), latencies.empty() ? 0.0 : latencies.back());
  return errors > 0 ? 1 : 0;
}
