// Output folders, checked writes, temporaries and their cleanup on signals (see output_folder.hpp).
#include "dirsched/output_folder.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <climits>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "dirsched/json_reader.hpp"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

namespace dirsched {
namespace {

namespace fs = std::filesystem;

// What the signal thread must clean up: the temporaries that exist now and the children to stop.
// Recursive, since a replace holds it while it registers the old folder's temporary name.
struct Registry {
  std::recursive_mutex m;
  std::set<std::string> temps;
  std::set<pid_t> children;
  // set_interrupt_note: what a stop leaves in a finished run folder, and what it says.
  std::string note_file, note_text, note_message;
};
// Leaked on purpose: the signal thread may use it while the process exits. A forked child gets a
// fresh one (the parent's lock may be held by the parent's signal thread at the fork).
std::atomic<Registry*> g_registry{new Registry};
// In a forked child, the parent's registry it replaced: kept reachable (leaked on purpose, like the
// child's own), so that LeakSanitizer does not report the copy the child can no longer name.
std::atomic<Registry*> g_parent_registry{nullptr};
std::atomic<bool> g_installed{false};

Registry& registry() {
  return *g_registry.load();
}

const char* kTempMark = ".tmp-dirsched-";

// How long a stop waits for the children it passed the signal to before it kills them.
constexpr std::chrono::seconds kChildGrace{5};

sigset_t handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

[[noreturn]] void clean_up_and_exit(int sig) {
  Registry& r = registry();
  r.m.lock();  // never released: the process ends here, and nothing may create or rename meanwhile
  for (pid_t c : r.children) kill(c, sig);
  // A child that does not end within the grace (it ignores the signal, or hangs before its own signal
  // thread could take it) is killed: a stop never waits on a child for ever.
  const auto deadline = std::chrono::steady_clock::now() + kChildGrace;
  std::size_t killed = 0;
  for (pid_t c : r.children) {
    int status = 0;
    while (true) {
      const pid_t got = waitpid(c, &status, WNOHANG);
      if (got == c || (got < 0 && errno != EINTR)) break;  // ended, or not ours to wait for any more
      if (got == 0 && std::chrono::steady_clock::now() >= deadline) {
        kill(c, SIGKILL);
        ++killed;
        while (waitpid(c, &status, 0) < 0 && errno == EINTR) {
        }
        break;
      }
      const timespec pause{0, 10'000'000};  // 10 ms
      nanosleep(&pause, nullptr);
    }
  }
  for (const std::string& t : r.temps) {
    std::error_code ec;
    fs::remove_all(t, ec);
  }
  const char* name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP";
  // A killed child removed nothing of its own: what it left is the next run's to remove (kill -9's rule).
  const std::string killed_note =
      killed ? "; " + std::to_string(killed) + " child process(es) did not stop within " +
                   std::to_string(kChildGrace.count()) + " s and were killed: what they left beside their outputs is " +
                   "removed by the next run into the same path"
             : "";
  std::string msg = std::string("dirsched: stopped by ") + name + "; temporary files removed, nothing written" +
                    killed_note + "\n";
  if (!r.note_file.empty()) {
    const int fd = open(r.note_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const std::string text = r.note_text + " (stopped by " + name + ")\n";
    if (fd >= 0) {
      if (write(fd, text.data(), text.size()) < 0 || fsync(fd) < 0) {
      }
      close(fd);
    }
    msg = std::string("dirsched: stopped by ") + name + "; " + r.note_message + killed_note + "\n";
  }
  if (write(STDERR_FILENO, msg.data(), msg.size()) < 0) {
  }
  _exit(128 + sig);
}

// Returns once the thread is about to wait: a caller that forks next (an evaluation child runs SimGrid's
// platform probe in a forked process) must not fork while the new thread is still starting, because
// its start-up allocates, and a fork then can copy the allocator's lock held (a grandchild that
// deadlocked in ASan's allocator in CI). Past `ready` the thread allocates nothing until a signal.
void start_signal_thread() {
  const sigset_t set = handled_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::atomic<bool> ready{false};  // touched by the thread only until it is set
  std::thread([set, &ready] {
    int sig = 0;
    ready.store(true, std::memory_order_release);
    while (sigwait(&set, &sig) != 0) {
    }
    clean_up_and_exit(sig);
  }).detach();
  while (!ready.load(std::memory_order_acquire)) std::this_thread::yield();
}

std::string random_tag() {
  std::random_device rd;
  char b[16];
  std::snprintf(b, sizeof b, "%08x", static_cast<unsigned>(rd()));
  return b;
}

// Whether `a` is `b` or one of its parents (both absolute and normal).
bool is_ancestor_or_same(const fs::path& a, const fs::path& b) {
  auto ia = a.begin(), ib = b.begin();
  for (; ia != a.end(); ++ia, ++ib) {
    if (ia->empty()) continue;  // a trailing separator
    if (ib == b.end() || *ia != *ib) return false;
  }
  return true;
}

fs::path canonical_or_self(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return ec ? fs::absolute(p).lexically_normal() : c;
}

std::string what_folder(FolderKind kind) {
  return kind == FolderKind::kRun      ? "dirsched run folder"
         : kind == FolderKind::kSweep  ? "dirsched sweep folder"
         : kind == FolderKind::kImport ? "dirsched import folder"
         : kind == FolderKind::kWhynot ? "dirsched whynot folder"
                                       : "dirsched optimize folder";
}

}  // namespace

void throw_write_error(const fs::path& p, int err) {
  throw WriteError(p.string(), std::strerror(err));
}

const char* marker_name(FolderKind kind) {
  return kind == FolderKind::kRun      ? ".dirsched-run"
         : kind == FolderKind::kSweep  ? ".dirsched-sweep"
         : kind == FolderKind::kImport ? ".dirsched-import"
         : kind == FolderKind::kWhynot ? ".dirsched-whynot"
                                       : ".dirsched-optimize";
}

bool has_marker(const fs::path& dir, FolderKind kind) {
  struct stat st {};
  return lstat((dir / marker_name(kind)).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

const std::vector<std::string>& run_file_names() {
  static const std::vector<std::string> names = {
      "dag.dot",      "dag.svg",   "events.jsonl", "metrics.json", "report.html",
      "summary.json", "tasks.csv", "timeline.svg", "trace.json",   "variant.json",
      "trace.paje",   "pictures-interrupted.txt", "fidelity.json"};
  return names;
}

std::string run_marker_json(record::RunMarker marker) {
  if (marker.files)
    marker.files->erase(std::remove(marker.files->begin(), marker.files->end(), marker_name(FolderKind::kRun)),
                        marker.files->end());
  return record::encode(marker);
}

namespace {

// The marker of run folder `dir`, read strictly; OutputRefused when it is not dirsched's.
record::RunMarker read_run_marker(const fs::path& dir) {
  const std::string path = (dir / marker_name(FolderKind::kRun)).string();
  const std::string refusal = " (not a marker dirsched wrote); remove the folder yourself";
  try {
    return record::decode_run_marker(read_json_file(path), path);
  } catch (const ScenarioError& e) {
    throw OutputRefused(e.what() + refusal);
  } catch (const record::RecordError& e) {
    throw OutputRefused(e.what() + refusal);
  }
}

// The marker of an optimize (or whynot) folder `dir` is the one text that command writes; OutputRefused
// otherwise (an empty file, or another command's marker under that name).
void check_fixed_marker(const fs::path& dir, FolderKind kind, const std::string& want) {
  const std::string path = (dir / marker_name(kind)).string();
  std::ifstream in(path, std::ios::binary);  // a regular file (has_marker), a few bytes long
  std::string text(64, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text != want)
    throw OutputRefused(path + ": not a marker dirsched wrote (it writes " + want.substr(0, want.size() - 1) +
                        "); remove the folder yourself");
}

}  // namespace

const std::string& optimize_marker_text() {
  static const std::string text = "{\"dirsched\":\"optimize\"}\n";
  return text;
}

const std::vector<std::string>& optimize_file_names() {
  static const std::vector<std::string> names = {"optimize.json", "best.json", "optimize-convergence.svg"};
  return names;
}

const std::string& whynot_marker_text() {
  static const std::string text = "{\"dirsched\":\"whynot\"}\n";
  return text;
}

const std::vector<std::string>& whynot_file_names() {
  static const std::vector<std::string> names = {"whynot.json", "scenario.json"};
  return names;
}

std::vector<std::string> foreign_entries(const fs::path& dir, FolderKind kind) {
  std::set<std::string> own;
  if (kind == FolderKind::kOptimize || kind == FolderKind::kWhynot) {
    const bool optimize = kind == FolderKind::kOptimize;
    check_fixed_marker(dir, kind, optimize ? optimize_marker_text() : whynot_marker_text());
    const std::vector<std::string>& names = optimize ? optimize_file_names() : whynot_file_names();
    own.insert(names.begin(), names.end());
  } else {
    const record::RunMarker marker = read_run_marker(dir);
    if (marker.files)
      own.insert(marker.files->begin(), marker.files->end());
    else
      own.insert(run_file_names().begin(), run_file_names().end());
    own.insert("pictures-interrupted.txt");  // written by the signal thread when a stop cuts the pictures short
  }
  std::vector<std::string> foreign;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == marker_name(kind)) continue;
    // Exactly a temporary of one of the folder's own names (render's pictures, the marker): the garbage
    // of a process that is gone, removed with the folder; one of a live process is not ours to delete.
    // Any other name holding ".tmp-dirsched-" is the user's like every other name.
    if (const pid_t owner = temp_owner_of(name, [&](const std::string& b) { return b == marker_name(kind) || own.count(b); })) {
      if (owner == getpid() || process_gone(owner)) continue;
      throw OutputRefused((dir / name).string() + ": a temporary of a dirsched still running (process " +
                          std::to_string(owner) + "); wait for it to finish, or stop it");
    }
    struct stat st {};
    const bool file = lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode);
    if (!file || !own.count(name)) foreign.push_back(file ? name : name + "/");
  }
  if (ec) throw OutputRefused(dir.string() + ": cannot list the folder (" + ec.message() + ")");
  std::sort(foreign.begin(), foreign.end());
  return foreign;
}

void refuse_foreign_entries(const fs::path& dir, const std::string& label, const std::string& instead,
                            FolderKind kind) {
  const std::vector<std::string> foreign = foreign_entries(dir, kind);
  if (foreign.empty()) return;
  std::string names;
  for (std::size_t i = 0; i < foreign.size() && i < 3; ++i) names += (i ? ", " : "") + foreign[i];
  if (foreign.size() > 3) names += ", ...";
  const bool one = foreign.size() == 1;
  throw OutputRefused(label + ": holds " + std::to_string(foreign.size()) + (one ? " entry" : " entries") +
                      " dirsched did not write (" + names + "); replacing the folder would delete " +
                      (one ? "it: move it" : "them: move them") + " out, or " + instead);
}

void add_to_run_marker(const fs::path& dir, const std::vector<std::string>& files) {
  record::RunMarker marker = read_run_marker(dir);
  if (!marker.files) return;  // an older marker: its names are trusted as they are
  marker.files->insert(marker.files->end(), files.begin(), files.end());
  write_file_atomic(dir / marker_name(FolderKind::kRun), run_marker_json(std::move(marker)));
}

fs::path check_output_folder(const std::string& out, FolderKind kind, const std::string& what) {
  const std::string label = what + " " + out;
  if (out.empty()) throw OutputRefused(what + ": an empty path");
  fs::path p = fs::path(out).lexically_normal();
  std::string s = p.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  p = s;
  // Its temporaries sit beside it under a longer name (NAME.events.tmp-dirsched-PID-RANDOM): a name
  // that leaves them no room would fail at the end of the run, naming a file the user never asked for.
  constexpr std::size_t kTempExtra = 40;  // ".events" + ".tmp-dirsched-" + a 10-digit pid + "-" + 8 hex
  if (const std::string base = p.filename().string(); base.size() + kTempExtra > NAME_MAX)
    throw OutputRefused(label + ": the folder's name is " + std::to_string(base.size()) + " bytes long, more than " +
                        std::to_string(NAME_MAX - kTempExtra) + " (a name holds at most " + std::to_string(NAME_MAX) +
                        " bytes, and the temporaries beside the folder add " + std::to_string(kTempExtra) +
                        "); give a shorter name");
  const fs::path canon = canonical_or_self(p);
  std::error_code ec;
  const fs::path cwd = canonical_or_self(fs::current_path(ec));
  if (is_ancestor_or_same(canon, cwd))
    throw OutputRefused(label + ": is the current folder or one of its parents; give a new path");
  std::set<fs::path> homes;
  if (const char* h = std::getenv("HOME"); h && *h) homes.insert(canonical_or_self(h));
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) homes.insert(canonical_or_self(pw->pw_dir));
  if (homes.count(canon)) throw OutputRefused(label + ": is the home folder; give a new path");
  struct stat st {};
  if (lstat(p.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode))
      throw OutputRefused(label + ": is a symbolic link, not a " + what_folder(kind) + "; give a new path");
    if (!S_ISDIR(st.st_mode))
      throw OutputRefused(label + ": is a file, not a " + what_folder(kind) + "; give a new path");
    if (!has_marker(p, kind))
      throw OutputRefused(label + ": exists and is not a " + what_folder(kind) + " (no " + marker_name(kind) +
                          " in it); give a new path, or remove it yourself");
    if (kind != FolderKind::kSweep && kind != FolderKind::kImport) refuse_foreign_entries(p, label, "give a new path", kind);
    return p;
  }
  // A new path: its first existing parent must be a folder.
  for (fs::path up = fs::absolute(p, ec).parent_path(); !up.empty(); up = up.parent_path()) {
    if (lstat(up.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode) && !(S_ISLNK(st.st_mode) && fs::is_directory(up, ec)))
        throw OutputRefused(label + ": " + up.string() + " is not a folder");
      break;
    }
    if (up == up.root_path()) break;
  }
  return p;
}

void create_parents(const fs::path& dest) {
  const fs::path parent = dest.parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw_write_error(parent, ec.value());
}

NewParents::NewParents(const fs::path& dest) {
  std::error_code ec;
  for (fs::path up = fs::absolute(dest, ec).parent_path(); !up.empty() && !fs::exists(up, ec);
       up = up.parent_path()) {
    created_.insert(created_.begin(), up);
    if (up == up.root_path()) break;
  }
  for (const fs::path& p : created_) {
    // A new folder's entry reaches the disk too, or a crash could lose the folders above the output.
    int err = mkdir(p.c_str(), 0755) == 0 ? sync_path(p.parent_path()) : errno == EEXIST ? 0 : errno;
    if (err == 0) continue;
    undo();  // the ones made so far: no destructor runs after a constructor throws
    throw_write_error(p, err);
  }
}

NewParents::~NewParents() {
  if (!kept_) undo();
}

void NewParents::undo() {
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) rmdir(it->c_str());  // only if empty
}

fs::path temp_path_beside(const fs::path& dest, const std::string& tag) {
  return dest.parent_path() / (dest.filename().string() + (tag.empty() ? "" : "." + tag) + kTempMark +
                               std::to_string(getpid()) + "-" + random_tag());
}

namespace {
// Where the suffix ".tmp-dirsched-PID-HEX" (PID decimal, HEX 8 hex digits, nothing after) of `name`
// starts, and its PID; 0 when `name` does not end so or has nothing before the suffix.
pid_t temp_suffix(const std::string& name, std::size_t* at) {
  const std::size_t mark = std::strlen(kTempMark);
  const auto where = name.rfind(kTempMark);
  if (where == std::string::npos || where == 0) return 0;
  const std::string tail = name.substr(where + mark);  // PID-HEX
  const auto dash = tail.find('-');
  if (dash == std::string::npos || dash == 0 || dash > 10 || tail.size() - dash - 1 != 8) return 0;
  for (std::size_t i = 0; i < tail.size(); ++i)
    if (i != dash && !(i < dash ? std::isdigit(static_cast<unsigned char>(tail[i]))
                                : std::isxdigit(static_cast<unsigned char>(tail[i]))))
      return 0;
  const long long pid = std::strtoll(tail.c_str(), nullptr, 10);
  if (pid <= 0 || pid > INT_MAX) return 0;
  *at = where;
  return static_cast<pid_t>(pid);
}
}  // namespace

pid_t temp_owner(const std::string& name) {
  std::size_t at = 0;
  return temp_suffix(name, &at);
}

pid_t temp_owner_of(const std::string& name, const std::function<bool(const std::string&)>& is_base) {
  std::size_t at = 0;
  const pid_t pid = temp_suffix(name, &at);
  if (pid == 0) return 0;
  const std::string prefix = name.substr(0, at);  // BASE or BASE.TAG
  if (is_base(prefix)) return pid;
  const auto dot = prefix.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == prefix.size()) return 0;
  for (std::size_t i = dot + 1; i < prefix.size(); ++i)
    if (!std::islower(static_cast<unsigned char>(prefix[i]))) return 0;
  return is_base(prefix.substr(0, dot)) ? pid : 0;
}

bool process_gone(pid_t pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  // kill(pid, 0) succeeds on a zombie: a SIGKILLed process whose parent died with it waits for PID 1 to
  // reap it, and a container's PID 1 may never do so. Its /proc/PID/stat state is Z (or X): it is gone.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;  // no /proc: trust kill()
  const auto paren = line.rfind(')');  // the command name may hold spaces and ')'
  if (paren == std::string::npos || paren + 2 >= line.size()) return false;
  const char state = line[paren + 2];
  return state == 'Z' || state == 'X';
}

TempPath::TempPath(fs::path p) : path_(std::move(p)) {
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.m);
  r.temps.insert(path_.string());
}

TempPath::~TempPath() {
  if (!owned_) return;
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.m);
  std::error_code ec;
  fs::remove_all(path_, ec);
  r.temps.erase(path_.string());
}

void TempPath::release() {
  if (!owned_) return;
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.m);
  r.temps.erase(path_.string());
  owned_ = false;
}

void create_temp_dir(const TempPath& dir) {
  std::lock_guard<std::recursive_mutex> lock(registry().m);
  if (mkdir(dir.path().c_str(), 0755) != 0) throw_write_error(dir.path(), errno);
}

std::FILE* open_temp_file(const std::string& path, int* err) {
  std::lock_guard<std::recursive_mutex> lock(registry().m);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  *err = f ? 0 : errno;
  return f;
}

namespace {
// Writes all of `text` to `fd`: 0, or the errno of the first failed write.
int write_all(int fd, std::string_view text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}
constexpr std::size_t kStreamBuffer = 1 << 20;
}  // namespace

StreamedFile::StreamedFile(fs::path path) : path_(std::move(path)) {
  {
    std::lock_guard<std::recursive_mutex> lock(registry().m);
    fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  }
  if (fd_ < 0) throw_write_error(path_, errno);
}

StreamedFile::~StreamedFile() {
  if (fd_ < 0) return;
  ::close(fd_);
  unlink(path_.c_str());
}

void StreamedFile::write(std::string_view text) {
  if (buffer_.size() + text.size() < kStreamBuffer) {
    buffer_ += text;
    return;
  }
  spill();
  if (err_ == 0) err_ = write_all(fd_, text);  // a large piece goes out as it is, not through the buffer
}

void StreamedFile::spill() {
  if (err_ == 0) err_ = write_all(fd_, buffer_);
  buffer_.clear();
}

void StreamedFile::close() {
  spill();
  int err = err_;
  // On the disk before it is renamed into place: a crash after success never leaves it empty.
  if (err == 0 && fsync(fd_) != 0 && errno != EINVAL) err = errno;
  if (::close(fd_) != 0 && err == 0) err = errno;
  fd_ = -1;
  if (err != 0) {
    unlink(path_.c_str());
    throw_write_error(path_, err);
  }
}

void write_file(const fs::path& path, std::string_view text) {
  StreamedFile file(path);
  file.write(text);
  file.close();
}

int sync_path(const fs::path& p) {
  const int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = fsync(fd) != 0 && errno != EINVAL ? errno : 0;  // EINVAL: a file system that cannot sync
  if (close(fd) != 0 && err == 0) err = errno;
  return err;
}

void rename_path(const fs::path& from, const fs::path& to) {
  std::lock_guard<std::recursive_mutex> lock(registry().m);
  if (std::rename(from.c_str(), to.c_str()) != 0) throw_write_error(to, errno);
}

void write_file_atomic(const fs::path& dest, std::string_view text) {
  TempPath tmp(temp_path_beside(dest));
  write_file(tmp.path(), text);
  std::lock_guard<std::recursive_mutex> lock(registry().m);
  rename_path(tmp.path(), dest);
  tmp.release();
  // The rename itself on the disk before success is reported (the old file, if any, is gone already).
  if (const int e = sync_path(dest.has_parent_path() ? dest.parent_path() : fs::path(".")))
    throw_write_error(dest, e);
}

FolderLock::FolderLock(const fs::path& dir) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd_ < 0) return;  // nothing there (yet): nothing to lock
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
    // The folder may have been replaced while this waited: the lock must be on the one at the path.
    struct stat held {}, now {};
    if (::fstat(fd_, &held) == 0 && ::stat(dir.c_str(), &now) == 0 && held.st_dev == now.st_dev &&
        held.st_ino == now.st_ino)
      return;
    ::close(fd_);
    fd_ = -1;
  }
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

namespace {

void replace_folder_now(TempPath& tmp, const fs::path& dest, FolderKind kind) {
  // Never while `render` (or another reader that locks) works in the old folder: it would write the
  // old run's pictures into the new one. Taken before the registry's lock, so a signal can still clean up.
  const FolderLock folder_lock(dest);
  std::unique_lock<std::recursive_mutex> lock(registry().m);
  // The new folder's entries reach the disk before the folder becomes visible (its files were synced
  // as they were written); the parent's new entry right after, before success is reported.
  if (const int e = sync_path(tmp.path())) throw_write_error(dest, e);
  const fs::path parent = dest.has_parent_path() ? dest.parent_path() : fs::path(".");
  struct stat st {};
  if (lstat(dest.c_str(), &st) != 0) {
    rename_path(tmp.path(), dest);
    if (const int e = sync_path(parent)) {
      std::rename(dest.c_str(), tmp.path().c_str());  // not claimed: taken back, and removed with `tmp`
      throw_write_error(dest, e);
    }
    tmp.release();
    return;
  }
  if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode) || !has_marker(dest, kind))
    throw OutputRefused(dest.string() + ": is not a " + what_folder(kind) +
                        " (something else appeared there during the run); the new outputs were not moved in");
  if (kind != FolderKind::kSweep && kind != FolderKind::kImport)
    refuse_foreign_entries(dest, dest.string(),
                           "give a new path (added during the run: the new outputs were not moved in)", kind);
  auto exchange = [&] {
    return syscall(SYS_renameat2, AT_FDCWD, tmp.path().c_str(), AT_FDCWD, dest.c_str(), RENAME_EXCHANGE) == 0;
  };
  if (exchange()) {
    if (const int e = sync_path(parent)) {
      // Not durable: exchange back, so that the path holds the old folder and `tmp` the new one.
      if (!exchange()) {
        tmp.release();  // `tmp` holds the old folder now: never remove it
        std::fprintf(stderr, "dirsched: warning: the replaced folder is left at %s\n", tmp.path().c_str());
      }
      throw_write_error(dest, e);
    }
    // The temporary name now holds the old folder: remove it (a signal meanwhile removes it too).
    lock.unlock();
    std::error_code ec;
    fs::remove_all(tmp.path(), ec);
    if (ec)
      std::fprintf(stderr, "dirsched: warning: the replaced folder is left at %s (%s)\n", tmp.path().c_str(),
                   ec.message().c_str());
    tmp.release();
    return;
  }
  const int err = errno;
  if (err != EINVAL && err != ENOSYS && err != ENOTSUP) throw_write_error(dest, err);
  // No exchange on this file system: the old folder steps aside, the new one moves in, the old goes.
  // Both renames happen under the lock, so no signal can stop the process between them.
  TempPath old(temp_path_beside(dest, "old"));
  rename_path(dest, old.path());
  int e = std::rename(tmp.path().c_str(), dest.c_str()) != 0 ? errno : 0;
  if (e == 0 && (e = sync_path(parent)) != 0) std::rename(dest.c_str(), tmp.path().c_str());
  if (e != 0) {
    std::rename(old.path().c_str(), dest.c_str());
    old.release();
    throw_write_error(dest, e);
  }
  tmp.release();
  lock.unlock();
}

}  // namespace

std::vector<fs::path> remove_dead_temporaries(const fs::path& dest) {
  // DEST.tmp-dirsched-PID-HEX (a folder being written, or an old folder being replaced) and
  // DEST.TAG.tmp-dirsched-PID-HEX (the streamed files beside it): nothing else is touched.
  const std::string base = dest.filename().string();
  const fs::path parent = dest.has_parent_path() ? dest.parent_path() : fs::path(".");
  auto ours = [&](const std::string& name) {
    return temp_owner_of(name, [&](const std::string& b) { return b == base; });
  };
  std::vector<fs::path> removed;
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const pid_t owner = ours(name);
    // Only a process that is gone: a live one (here, or a pid reused since) keeps its temporary.
    if (owner == 0 || owner == getpid() || !process_gone(owner)) continue;
    std::error_code rec;
    fs::remove_all(it->path(), rec);
    if (!rec) removed.push_back(it->path());
  }
  return removed;
}

void replace_folder(TempPath& tmp, const fs::path& dest, FolderKind kind) {
  replace_folder_now(tmp, dest, kind);
  // The new folder is in place: what killed runs into the same path left beside it is garbage.
  for (const fs::path& p : remove_dead_temporaries(dest))
    std::fprintf(stderr, "dirsched: removed %s, left by a process that was killed\n", p.c_str());
}

void install_interrupt_cleanup() {
  if (g_installed.exchange(true)) return;
  start_signal_thread();
}

pid_t fork_tracked() {
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.m);
  const pid_t pid = fork();
  if (pid == 0) {
    g_parent_registry.store(g_registry.exchange(new Registry));
    if (g_installed.load()) start_signal_thread();
  } else if (pid > 0) {
    r.children.insert(pid);
  }
  return pid;
}

void set_interrupt_note(const std::string& file, const std::string& text, const std::string& message) {
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.m);
  r.note_file = file;
  r.note_text = text;
  r.note_message = message;
}

void child_finished(pid_t pid) {
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.m);
  r.children.erase(pid);
}

}  // namespace dirsched
