#include "evaluate.hpp"

#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>

#include "dirsched/error.hpp"
#include "dirsched/eventsim.hpp"
#include "dirsched/output_folder.hpp"
#include "error_kind.hpp"
#include "dirsched/outputs.hpp"
#include "dirsched/sim.hpp"

namespace dirsched {

namespace {

void write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<std::size_t>(n);
  }
}

}  // namespace

std::string system_refusal(const std::string& what) {
  const int e = errno;
  std::string text = "cannot " + what + ": " + std::strerror(e);
  rlimit l{};
  if (e == EMFILE && ::getrlimit(RLIMIT_NOFILE, &l) == 0 && l.rlim_cur != RLIM_INFINITY)
    text += " (the open-file limit, ulimit -n, is " + std::to_string(l.rlim_cur) + ")";
  if (e == EAGAIN && ::getrlimit(RLIMIT_NPROC, &l) == 0 && l.rlim_cur != RLIM_INFINITY)
    text += " (the process limit, ulimit -u, is " + std::to_string(l.rlim_cur) + ")";
  return text;
}

std::vector<std::string> run_in_children(std::size_t count, unsigned jobs,
                                         const std::function<std::string(std::size_t)>& work,
                                         const std::function<std::string(std::size_t)>& who) {
  struct Child {
    std::size_t index;
    pid_t pid;
    std::string out;
  };
  std::vector<std::string> texts(count);
  std::map<int, Child> active;  // read end -> child
  std::size_t next = 0;
  std::string failure;
  ErrorKind failure_kind = ErrorKind::kBadInput;
  // The failure reported is the one of the lowest index: children start in index order and the pool
  // waits for every started one, so the same inputs always name the same evaluation.
  std::size_t failure_index = count;
  while ((next < count && failure.empty()) || !active.empty()) {
    while (failure.empty() && next < count && active.size() < std::max(1u, jobs)) {
      const std::size_t i = next++;
      // A pipe or fork the system refuses (a descriptor or process limit) ends the pool as a failed
      // evaluation does: none started after it, the running ones waited for (thrown here, they ran on,
      // orphans writing after dirsched had exited; issue 53 F19).
      int fds[2];
      if (::pipe(fds) != 0) {
        failure = system_refusal("make a pipe for an evaluation"), failure_index = i;
        break;
      }
      std::fflush(stdout);
      std::fflush(stderr);
      const pid_t pid = fork_tracked();
      if (pid < 0) {
        failure = system_refusal("start an evaluation"), failure_index = i;
        ::close(fds[0]), ::close(fds[1]);
        break;
      }
      if (pid == 0) {
        ::close(fds[0]);
        int rc = 0;
        std::string text;
        try {
          if (const char* kind = std::getenv("DIRSCHED_INTERNAL_ERROR_TEST_IN_CHILD")) cli::throw_for_test(kind);
          text = "R" + work(i);
        } catch (...) {
          // The kind travels as one digit before the message, so the parent ends as the child would have.
          const cli::ErrorReport report = cli::classify_current_exception();
          text = "E" + std::to_string(static_cast<int>(report.kind)) + report.message;
          rc = 2;
        }
        write_all(fds[1], text);
        ::close(fds[1]);
        _exit(rc);
      }
      ::close(fds[1]);
      active[fds[0]] = Child{i, pid, {}};
    }
    if (active.empty()) break;
    std::vector<pollfd> p;
    for (const auto& [fd, c] : active) p.push_back({fd, POLLIN, 0});
    if (::poll(p.data(), p.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw BadInput(std::string("poll: ") + std::strerror(errno));
    }
    for (const pollfd& q : p) {
      if (!(q.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Child& c = active.at(q.fd);
      char buf[65536];
      const ssize_t n = ::read(q.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        c.out.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      ::close(q.fd);
      int status = 0;
      while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
      }
      child_finished(c.pid);
      if (!c.out.empty() && c.out[0] == 'R' && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        texts[c.index] = c.out.substr(1);
      } else if (c.index < failure_index) {
        failure_index = c.index;
        if (c.out.size() > 2 && c.out[0] == 'E') {
          failure_kind = static_cast<ErrorKind>(c.out[1] - '0');
          failure = who(c.index) + ": " + c.out.substr(2);
        } else {
          // A child that died without a report (a signal, an abort) is a bug, never bad input.
          failure_kind = ErrorKind::kInternal;
          failure = "internal error: " + who(c.index) + ": the evaluation " +
                    (WIFSIGNALED(status) ? "ended by signal " + std::to_string(WTERMSIG(status))
                                         : "ended with status " + std::to_string(WEXITSTATUS(status))) +
                    " without a report; this is a bug in dirsched: please report it with the input";
        }
      }
      active.erase(q.fd);
    }
  }
  if (!failure.empty()) throw cli::ClassifiedError(failure_kind, failure);
  return texts;
}

namespace {

// One evaluation on the event engine, in this process; an error names the evaluation.
SweepRow evaluate_on_events(const Evaluation& e, const std::string& who) {
  try {
    EventRunOptions o;
    o.seed = e.seed;
    o.record_events = false;
    const std::unique_ptr<Run> run = run_events(*e.scenario, o);
    return row_from_summary(e.variant, summarise(*run));
  } catch (...) {
    const cli::ErrorReport report = cli::classify_current_exception();
    throw cli::ClassifiedError(report.kind, who + ": " + report.message);
  }
}

}  // namespace

bool on_event_engine(const std::vector<Evaluation>& evals, const std::vector<std::string>& simgrid_args) {
  return simgrid_args.empty() && std::all_of(evals.begin(), evals.end(), [](const Evaluation& e) {
           return !event_engine_refusal(*e.scenario);
         });
}

std::vector<SweepRow> evaluate_all(const std::vector<Evaluation>& evals, unsigned jobs,
                                   const std::vector<std::string>& simgrid_args) {
  const auto who = [&](std::size_t i) {
    return variant_dir(evals[i].variant) + " seed " + std::to_string(evals[i].seed);
  };
  // Durations only, no --cfg: the event engine gives SimGrid's rows without an engine or a process per
  // evaluation. Alone, in this process; with jobs, each child takes a contiguous share.
  if (on_event_engine(evals, simgrid_args)) {
    std::vector<SweepRow> rows(evals.size());
    const std::size_t shares = std::min<std::size_t>(std::max(1u, jobs), evals.size());
    if (shares <= 1) {
      for (std::size_t i = 0; i < evals.size(); ++i) rows[i] = evaluate_on_events(evals[i], who(i));
      return rows;
    }
    const auto first = [&](std::size_t share) { return evals.size() * share / shares; };
    const std::vector<std::string> texts = run_in_children(
        shares, static_cast<unsigned>(shares),
        [&](std::size_t share) {
          nlohmann::json list = nlohmann::json::array();
          for (std::size_t i = first(share); i < first(share + 1); ++i)
            list.push_back(sweep_row_json(evaluate_on_events(evals[i], who(i))));
          return list.dump();
        },
        [&](std::size_t share) { return "evaluations " + std::to_string(first(share)) + "-" + std::to_string(first(share + 1) - 1); });
    for (std::size_t share = 0; share < shares; ++share) {
      const nlohmann::json list = nlohmann::json::parse(texts[share]);
      for (std::size_t i = first(share); i < first(share + 1); ++i)
        rows[i] = sweep_row_from_json(evals[i].variant, list.at(i - first(share)));
    }
    return rows;
  }
  const std::vector<std::string> texts = run_in_children(
      evals.size(), jobs,
      [&](std::size_t i) {
        RunOptions o;
        o.seed = evals[i].seed;
        o.record_events = false;
        o.simgrid_args = simgrid_args;
        const std::unique_ptr<Run> run = simulate(*evals[i].scenario, o);
        return sweep_row_json(row_from_summary(evals[i].variant, summarise(*run))).dump();
      },
      who);
  std::vector<SweepRow> rows(evals.size());
  for (std::size_t i = 0; i < evals.size(); ++i)
    rows[i] = sweep_row_from_json(evals[i].variant, nlohmann::json::parse(texts[i]));
  return rows;
}

}  // namespace dirsched
