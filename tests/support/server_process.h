// Starts a child process (e.g. `sam3 serve ... --port 0`); with read_url, waits for the first
// line of its stdout and takes the URL in it.
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace sam3::test {

// A server may answer (413, 401) before a request body is sent and close; the client's next
// write must then fail with EPIPE, as in curl or a browser, not kill the test with SIGPIPE.
inline const bool kIgnoreSigpipe = (::signal(SIGPIPE, SIG_IGN), true);

class ServerProcess {
 public:
  explicit ServerProcess(std::vector<std::string> args, bool read_url = true) {
    int out[2];
    if (::pipe(out) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    stdout_ = ::fdopen(out[0], "r");
    char line[512] = {};
    if (read_url && pid_ > 0 && std::fgets(line, sizeof line, stdout_)) first_line_ = line;
    const auto at = first_line_.find("http://");
    if (at != std::string::npos) {
      url_ = first_line_.substr(at);
      while (!url_.empty() && (url_.back() == '\n' || url_.back() == '\r')) url_.pop_back();
      port_ = std::stoi(url_.substr(url_.rfind(':') + 1));
    }
  }

  ~ServerProcess() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (stdout_) std::fclose(stdout_);
  }

  // Sends a signal and waits; returns the exit code (-1 if killed by a signal).
  int stop(int signal = SIGTERM) {
    ::kill(pid_, signal);
    return wait();
  }

  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // The exit code once the process has ended within `limit` (-1 if killed by a signal); nullopt
  // while it still runs.
  std::optional<int> exit_within(std::chrono::milliseconds limit) {
    for (auto waited = std::chrono::milliseconds(0); waited <= limit; waited += std::chrono::milliseconds(50)) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return std::nullopt;
  }

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& url() const { return url_; }
  const std::string& first_line() const { return first_line_; }

 private:
  pid_t pid_ = -1;
  FILE* stdout_ = nullptr;
  std::string first_line_, url_;
  int port_ = 0;
  bool exited_ = false;
};

}  // namespace sam3::test
