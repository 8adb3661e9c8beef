// Output folders and the files in them: what a command may write, how it writes, and what it leaves
// when it stops.
//
// The rule (docs/outputs.md, "Output folders"): a command writes only into a path that does not exist yet, or
// into a folder a dirsched command wrote, recognised by its marker file (`.dirsched-run` in a run
// folder, `.dirsched-sweep` in a sweep folder). Anything else (a file, a symbolic link, a folder
// without the marker, the current folder or one of its parents, `/`, the home folder) is refused with
// OutputRefused (exit 2) before anything is touched. `DIR/` is the same path as `DIR`.
//
// What dirsched owns inside a run folder: the marker lists every file the run wrote (`"files"`, and
// `render` adds the pictures it draws there before it draws them). A run folder is replaced only when
// every entry in it is a regular file the marker lists (or the marker itself, or exactly a temporary of
// one of those names left by a process that is gone; a live one's refuses the replace):
// a file the user added (notes.txt beside summary.json), a folder or a link makes the replace refuse
// (OutputRefused naming the folder and the first such entries), before and again at the exchange. A
// marker without the list (written by a dirsched before the list existed) is trusted for the names a
// run can write (run_file_names()); a marker that is not dirsched's JSON is refused.
//
// How it writes: every file and folder is first written under a temporary name beside its destination
// (`NAME.tmp-dirsched-PID-RANDOM`), checked (every write, flush and close), then renamed in place. A
// run folder replaces the old one with one atomic exchange (Linux renameat2 RENAME_EXCHANGE), so the
// path always holds the old folder or the new one, whole; the old one is removed afterwards. A write
// that fails throws WriteError (exit 3) naming the path; nothing is claimed and no temporary is left.
// Durability: every file is fsynced before its rename, a new folder before it is moved in, and the
// folder holding the renamed entry after it, so a crash after success cannot lose or empty an output.
//
// Temporaries are registered here while they exist and removed on every exit path: TempPath removes
// its path when it goes out of scope (exceptions included), and install_interrupt_cleanup() starts a
// thread that takes SIGINT, SIGTERM and SIGHUP (blocked in every other thread), stops the children
// started by fork_tracked(), removes every registered temporary and exits 128 + the signal number
// (130, 143, 129). Creating a temporary and the exchange of a run folder hold the registry's lock, so
// a signal waits for them to finish and never sees half of a rename. This is the one process-wide
// state of the project: signals are process-wide.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "dirsched/error.hpp"
#include "dirsched/record/marker.hpp"

namespace dirsched {

// Exit statuses shared by every command (docs/exit-status.md lists them all).
constexpr int kExitBadInput = 2;     // bad input or a refused output path: nothing written
constexpr int kExitCannotWrite = 3;  // an output could not be written: nothing claimed, nothing left

// An output path the rule refuses (exit 2).
class OutputRefused : public BadInput {
 public:
  using BadInput::BadInput;
};

// A write that failed (exit 3): "cannot write PATH: REASON".
class WriteError : public CannotWrite {
 public:
  WriteError(const std::string& path, const std::string& reason)
      : CannotWrite("cannot write " + path + ": " + reason), path_(path), reason_(reason) {}
  const std::string& path() const { return path_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string path_, reason_;
};
// "cannot write PATH: REASON" from errno.
[[noreturn]] void throw_write_error(const std::filesystem::path& p, int err);

enum class FolderKind { kRun, kSweep, kImport, kOptimize, kWhynot };
// ".dirsched-run", ".dirsched-sweep", ".dirsched-import", ".dirsched-optimize", ".dirsched-whynot"
const char* marker_name(FolderKind kind);
bool has_marker(const std::filesystem::path& dir, FolderKind kind);

// The names a run folder's files can have (besides the marker): the data files, variant.json and the
// pictures. Trusted in a folder whose marker has no "files" list.
const std::vector<std::string>& run_file_names();
// The text of a run folder's marker (record/marker.hpp), `files` without the marker's own name.
std::string run_marker_json(record::RunMarker marker);
// The names of the files `dirsched optimize` writes into its folder (besides the marker), and the
// marker's text: the one a folder must hold to be replaced by another optimize.
const std::vector<std::string>& optimize_file_names();
const std::string& optimize_marker_text();
// The same for `dirsched whynot`'s folder (whynot.json, scenario.json).
const std::vector<std::string>& whynot_file_names();
const std::string& whynot_marker_text();
// The entries of run folder (or, with kOptimize or kWhynot, that command's folder) `dir` that dirsched did not write (see
// the header), sorted; OutputRefused when its marker is not dirsched's, or when it holds a temporary
// of a dirsched still running.
std::vector<std::string> foreign_entries(const std::filesystem::path& dir, FolderKind kind = FolderKind::kRun);
// Throws OutputRefused ("LABEL: holds N entries dirsched did not write (a, b, c); replacing the folder
// would delete them: move them out, or INSTEAD") when `dir` has foreign entries.
void refuse_foreign_entries(const std::filesystem::path& dir, const std::string& label,
                            const std::string& instead, FolderKind kind = FolderKind::kRun);
// Adds `files` to the list of run folder `dir`'s marker (rewritten atomically); a marker without a list
// is left as it is.
void add_to_run_marker(const std::filesystem::path& dir, const std::vector<std::string>& files);

// Checks `out` against the rule (see the header) and returns it without trailing slashes. `what`
// names the option in messages ("--out"). Touches nothing; throws OutputRefused.
std::filesystem::path check_output_folder(const std::string& out, FolderKind kind, const std::string& what);
// Creates the missing parents of `dest` (WriteError when it cannot).
void create_parents(const std::filesystem::path& dest);
// create_parents that takes them back (the empty ones it made) unless keep() was called: a run that
// fails writes nothing, not even the folders above its output.
class NewParents {
 public:
  explicit NewParents(const std::filesystem::path& dest);
  ~NewParents();
  NewParents(const NewParents&) = delete;
  NewParents& operator=(const NewParents&) = delete;
  void keep() { kept_ = true; }

 private:
  void undo();
  std::vector<std::filesystem::path> created_;  // outermost first
  bool kept_ = false;
};

// A unique temporary name beside `dest`: DEST + "." + tag + ".tmp-dirsched-PID-RANDOM" ("" tag: no tag).
std::filesystem::path temp_path_beside(const std::filesystem::path& dest, const std::string& tag = "");
// Whether a file name is one of the temporaries above, and the pid that made it (0 when it is not): it
// ends exactly in ".tmp-dirsched-PID-HEX" (decimal PID, 8 hex digits) after a non-empty name. A name
// that merely holds ".tmp-dirsched-" (`results.tmp-dirsched-1-keep`) is not one.
pid_t temp_owner(const std::string& file_name);
// temp_owner, for the temporaries of one name only: BASE.tmp-dirsched-PID-HEX or BASE.TAG.tmp-dirsched-
// PID-HEX (TAG lowercase letters) with `is_base(BASE)`; 0 for any other name. The one predicate of what
// dirsched may take as its own garbage: in the folder beside an output (remove_dead_temporaries) and
// inside a run or import folder being replaced (foreign_entries, import), each then asks process_gone.
pid_t temp_owner_of(const std::string& file_name, const std::function<bool(const std::string&)>& is_base);
// Whether process `pid` is gone from this machine (kill(pid, 0) says ESRCH, or it is a zombie: killed,
// not yet reaped): only then is what it left garbage; a live process, or one this user may not signal,
// keeps its temporaries.
bool process_gone(pid_t pid);

// A registered temporary path, removed (recursively) when this goes out of scope unless released.
class TempPath {
 public:
  explicit TempPath(std::filesystem::path p);
  ~TempPath();
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;
  const std::filesystem::path& path() const { return path_; }
  void release();  // the path was renamed away: forget it without removing anything

 private:
  std::filesystem::path path_;
  bool owned_ = true;
};

// Creates a registered temporary folder (WriteError when it cannot), or opens a registered temporary
// file for writing (the caller's TempPath registered it): nullptr and `*err` set when it cannot. It
// does not throw, since the event log opens its file inside a SimGrid actor.
void create_temp_dir(const TempPath& dir);
std::FILE* open_temp_file(const std::string& path, int* err);

// Writes `text` to `path` (a new file in a temporary folder, or a temporary file), checking every
// write, the fsync and the close; WriteError on any failure (the partial file is removed).
void write_file(const std::filesystem::path& path, std::string_view text);
// A new file in a temporary folder written as it is made, through a 1 MiB buffer: for outputs too
// large to hold whole (an import's observed events, its scenario's trace). close() writes what is
// left, syncs and closes, and throws WriteError naming the path when any write failed (the partial
// file is removed); a writer destroyed without close() removes its file.
class StreamedFile {
 public:
  explicit StreamedFile(std::filesystem::path path);
  ~StreamedFile();
  StreamedFile(const StreamedFile&) = delete;
  StreamedFile& operator=(const StreamedFile&) = delete;
  void write(std::string_view text);
  StreamedFile& operator<<(std::string_view text) {
    write(text);
    return *this;
  }
  void close();

 private:
  void spill();
  std::filesystem::path path_;
  std::string buffer_;
  int fd_ = -1;
  int err_ = 0;  // errno of the first failed write
};
// fsync of a file or folder (opened read-only): 0, or the errno of the failure. A file system that
// cannot sync (EINVAL) counts as success.
int sync_path(const std::filesystem::path& p);
// Writes `text` to `dest` through a temporary file beside it (synced), renamed over `dest` at the end,
// then syncs the folder holding it.
void write_file_atomic(const std::filesystem::path& dest, std::string_view text);
// Renames, WriteError naming `to` on failure.
void rename_path(const std::filesystem::path& from, const std::filesystem::path& to);

// An exclusive flock(2) on a folder, held while it lives: `run` takes it before it replaces a run
// folder, `render` for the whole of its redraw, `sweep --collect` on each variant folder while reading
// it, so that none of them sees a folder half old, half new. A folder that does not exist is not
// locked; a folder replaced while this waited is locked again at its path.
class FolderLock {
 public:
  explicit FolderLock(const std::filesystem::path& dir);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

// Moves the complete folder `tmp` to `dest`, which is absent or a folder of `kind` (checked again
// here, under the lock: OutputRefused otherwise). Durable: `tmp` is synced before the move (its files
// must be synced already) and the parent folder after it; when that last sync fails the move is undone
// (WriteError, `dest` as it was). An existing `dest` is exchanged atomically and the old folder removed; where the file system cannot exchange, the old folder is renamed aside first
// and removed after (a stop between the renames cannot happen: signals wait for the lock).
void replace_folder(TempPath& tmp, const std::filesystem::path& dest, FolderKind kind);
// Removes what processes that are gone (killed: kill -9, a lost node) left beside `dest`: the
// temporaries named DEST.tmp-dirsched-PID-HEX and DEST.TAG.tmp-dirsched-PID-HEX whose PID no longer
// runs on this machine; returns what it removed. replace_folder calls it once the new folder is in
// place. (On a folder shared by several machines, a PID is looked up on this one: run into one path
// from one machine at a time.)
std::vector<std::filesystem::path> remove_dead_temporaries(const std::filesystem::path& dest);

// Starts the signal thread (see the header). Call once, first thing in main, before any thread.
void install_interrupt_cleanup();
// fork() that the signal thread knows about: a signal to the parent goes to its children too, and it
// waits for them before it exits (5 s at most: a child still there then is killed). The child starts
// with an empty registry and its own signal thread.
pid_t fork_tracked();
void child_finished(pid_t pid);  // after waitpid() reaped it
// While `file` is not empty, a stop by signal also writes `text` (and which signal) to `file` (inside a
// run folder already in place: its data files stay) and says `message` instead of "nothing written".
// The CLI sets it while it draws the pictures of a run whose data files are written.
void set_interrupt_note(const std::string& file, const std::string& text, const std::string& message);

}  // namespace dirsched
