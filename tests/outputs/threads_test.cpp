// The threads of outputs/: the signal thread that removes registered temporaries, and fork tracking
// from several threads at once. Built without SimGrid or Graphviz, so that CI's ThreadSanitizer stage
// runs it beside runtime_tests.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
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

// A stop waits for the children it passed the signal to, but not for ever: a child that ignores the
// signal is killed after the grace, and the stop still exits 128 + the signal. (The test waits 60 s at
// most, so a stop that hangs fails it instead of hanging the suite.)
TEST(ForkTracking, AChildThatIgnoresTheSignalIsKilledAfterTheGrace) {
  install_interrupt_cleanup();
  const fs::path dir = fresh_dir("grace");
  const pid_t parent = fork_tracked();  // a process of its own with its own signal thread
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    const int err = open((dir / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(err, STDERR_FILENO);
    const pid_t child = fork_tracked();
    if (child == 0) {
      // Ignored and unblocked in the thread a kill() goes to: the signal is discarded when sent, so the
      // child's own signal thread never sees it.
      signal(SIGTERM, SIG_IGN);
      sigset_t term;
      sigemptyset(&term);
      sigaddset(&term, SIGTERM);
      pthread_sigmask(SIG_UNBLOCK, &term, nullptr);
      std::ofstream(dir / "child-ready") << "1";
      for (;;) pause();
    }
    std::ofstream(dir / "child") << child;
    while (!fs::exists(dir / "child-ready")) usleep(1000);
    kill(getpid(), SIGTERM);
    for (;;) pause();
  }
  int status = 0;
  pid_t got = 0;
  for (int i = 0; i < 6000 && (got = waitpid(parent, &status, WNOHANG)) == 0; ++i) usleep(10'000);
  if (got == 0) {
    kill(parent, SIGKILL);
    waitpid(parent, &status, 0);
  }
  child_finished(parent);
  pid_t child = 0;
  std::ifstream(dir / "child") >> child;
  ASSERT_GT(child, 0);
  const bool child_gone = process_gone(child);
  if (!child_gone) kill(child, SIGKILL);
  ASSERT_EQ(got, parent) << "the stop still waits for the child after 60 s";
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_TRUE(child_gone) << "the stop exited and left its child running";
  std::ifstream err(dir / "stderr");
  const std::string said((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
  EXPECT_NE(said.find("1 child process(es) did not stop within 5 s and were killed"), std::string::npos) << said;
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
