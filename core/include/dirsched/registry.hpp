// The worker registry and the callable table, fixed when the Scheduler is built.
//
// NEXT_LEVEL workers keep their stable ids and their registration order (the order the singles pass
// visits them). SUB workers are a pool with no public id, indexed 0..n-1. Callables carry the
// namespace that decides which worker kinds may run them, and REMOTE callables an eligible set.
// Building a registry with a duplicate or negative id, or an eligible set that names a worker that is
// not a registered remote one, is a configuration error: it throws RegistryError before any task
// exists. Once handed to a Scheduler the registry never changes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dirsched/error.hpp"
#include "dirsched/ids.hpp"

namespace dirsched {

enum class WorkerKind : std::uint8_t { kLocalChip, kLocalWorker, kRemote };
enum class Namespace : std::uint8_t { kLocalChip, kLocalPython, kRemote };
enum class Memory : std::uint8_t { kHost, kChild, kRemote };

std::string_view to_string(WorkerKind kind);
std::string_view to_string(Namespace ns);
std::string_view to_string(Memory memory);
std::optional<WorkerKind> worker_kind_from_string(std::string_view text);
std::optional<Namespace> namespace_from_string(std::string_view text);
std::optional<Memory> memory_from_string(std::string_view text);

// A registry the caller describes wrongly: bad input (dirsched::BadInput; no longer a std::invalid_argument).
class RegistryError : public BadInput {
 public:
  using BadInput::BadInput;
};

struct NextLevelWorker {
  WorkerId id;
  WorkerKind kind;
  // Mailbox frames (staging, #1583): 1 (default) or 2. Two let the worker hold one staged member of the
  // next run besides the member it runs; local kinds only (a remote worker has one frame).
  std::uint32_t frames = 1;
};

struct Callable {
  std::string name;
  Namespace ns = Namespace::kLocalPython;
  // REMOTE only. std::nullopt means "every registered remote worker".
  std::optional<std::vector<WorkerId>> eligible;
};

class Registry {
 public:
  // Registration order is call order. `frames` is 1 or 2, and 2 only for a local kind: RegistryError
  // otherwise.
  void add_next_level(WorkerId id, WorkerKind kind, std::uint32_t frames = 1);
  void set_sub_workers(std::uint32_t count) { sub_workers_ = count; }
  // RegistryError past kMaxCallables (a task's core entry holds its callable in 16 bits).
  static constexpr std::size_t kMaxCallables = 65535;
  CallableId add_callable(Callable callable);

  std::size_t next_level_count() const { return workers_.size(); }
  const NextLevelWorker& worker_at(std::uint32_t index) const { return workers_[index]; }
  // Registration index of `id`, if registered.
  std::optional<std::uint32_t> index_of(WorkerId id) const;
  std::uint32_t sub_workers() const { return sub_workers_; }

  std::size_t callable_count() const { return callables_.size(); }
  const Callable& callable(CallableId id) const { return callables_[id.index()]; }
  // True when a REMOTE callable may run on the worker at registration `index`.
  bool eligible(CallableId id, std::uint32_t index) const;
  // True when `id` names a registered remote worker.
  bool is_remote(WorkerId id) const;
  // True when some registered local child runs callables of namespace `ns` here (a local_chip for
  // LOCAL_CHIP, a local_worker for LOCAL_PYTHON; never for REMOTE). The runtime checks a local
  // callable per level: this decides a target that is not a registered local child.
  bool runs_locally(Namespace ns) const {
    return ns == Namespace::kLocalChip ? local_chips_ > 0
                                       : ns == Namespace::kLocalPython && local_workers_ > 0;
  }
  // Throws RegistryError unless `owner` fits `memory`: none for host memory, a registered remote worker
  // for remote memory, a registered local (chip or worker) child for child memory.
  void check_owner(const std::string& buffer, Memory memory, const std::optional<WorkerId>& owner) const;
  // workers.mpi_groups: registered remote workers forming one MPI group, ranks in rank order. Throws
  // RegistryError for an empty group, an id that is not a registered remote worker, or one already
  // in a group (the loader words the same checks with their JSON paths first).
  void add_mpi_group(std::string name, std::vector<WorkerId> ranks);
  struct MpiGroup {
    std::string name;
    std::vector<WorkerId> ranks;
  };
  const std::vector<MpiGroup>& mpi_groups() const { return mpi_groups_; }

 private:
  std::vector<NextLevelWorker> workers_;
  std::unordered_map<WorkerId, std::uint32_t> index_;  // lookup only, never iterated
  // The same for ids below kDense, by id: index_of() is on every dispatch and end, and a hash lookup
  // was 3% of a million-task run.
  static constexpr std::int64_t kDense = 65536;
  static constexpr std::uint32_t kNoIndex = 0xffffffffu;
  std::vector<std::uint32_t> dense_;
  std::uint32_t sub_workers_ = 0;
  std::size_t local_chips_ = 0, local_workers_ = 0;
  std::vector<Callable> callables_;
  std::vector<std::vector<bool>> eligible_;  // per callable, per registration index
  std::vector<MpiGroup> mpi_groups_;
};

}  // namespace dirsched
