// The threads of outputs/: the signal thread that removes registered temporaries, and fork tracking
// from several threads at once. Built without SimGrid or Graphviz, so that CI's ThreadSanitizer stage
// runs it beside runtime_tests.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "dirsched/output_folder.hpp"

namespace fs = std::filesystem;
using namespace dirsched;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("dirsched-threads-test-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST(SignalThread, RemovesRegisteredTemporariesAndExitsWithTheSignal) {
  const fs::path dir = fresh_dir("signal");
  const fs::path dest = dir / "out";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    install_interrupt_cleanup();
    TempPath tmp(temp_path_beside(dest));
    std::ofstream(tmp.path()) << "partial";
    std::ofstream(dir / "ready") << "1";
    kill(getpid(), SIGTERM);  // blocked here; the signal thread takes it
    for (;;) pause();
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_TRUE(fs::exists(dir / "ready"));
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != "ready") left.push_back(e.path().filename().string());
  EXPECT_TRUE(left.empty()) << "left: " << (left.empty() ? "" : left.front());
  fs::remove_all(dir);
}

TEST(ForkTracking, ChildrenAndTemporariesRegisteredFromSeveralThreads) {
  install_interrupt_cleanup();
  const fs::path dir = fresh_dir("fork");
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 8; ++i) {
        TempPath tmp(temp_path_beside(dir / ("t" + std::to_string(t))));
        const pid_t pid = fork_tracked();
        if (pid == 0) _exit(7);
        if (pid < 0) {
          ++failures;
          continue;
        }
        int status = 0;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 7) ++failures;
        child_finished(pid);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

// What a SIGKILLed process left is garbage even before anyone reaps it: a zombie counts as gone (a
// container's PID 1 may never reap an orphan, and kill(pid, 0) succeeds on a zombie).
TEST(ProcessGone, ALiveChildIsNotGoneAZombieIs) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  EXPECT_FALSE(process_gone(child));
  ASSERT_EQ(kill(child, SIGKILL), 0);
  // Not reaped: wait until the kernel has made it a zombie (WNOWAIT leaves it one).
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0);
  EXPECT_EQ(kill(child, 0), 0) << "a zombie still answers kill(pid, 0)";
  EXPECT_TRUE(process_gone(child));
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(process_gone(child));
  EXPECT_FALSE(process_gone(getpid()));
}
