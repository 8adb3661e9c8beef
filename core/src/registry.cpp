#include "dirsched/registry.hpp"

#include <algorithm>

#include <string>

namespace dirsched {

void Registry::add_next_level(WorkerId id, WorkerKind kind, std::uint32_t frames) {
  if (frames != 1 && frames != 2)
    throw RegistryError("worker " + std::to_string(id.value()) + ": frames must be 1 or 2, not " +
                        std::to_string(frames));
  if (frames == 2 && kind == WorkerKind::kRemote)
    throw RegistryError("worker " + std::to_string(id.value()) + ": a remote worker has one frame");
  if (id.value() < 0) throw RegistryError("worker id " + std::to_string(id.value()) + " is negative");
  if (index_.count(id))
    throw RegistryError("worker id " + std::to_string(id.value()) + " is registered twice");
  if (!callables_.empty()) throw RegistryError("register every worker before the first callable");
  const auto index = static_cast<std::uint32_t>(workers_.size());
  index_.emplace(id, index);
  if (id.value() < kDense) {
    const auto v = static_cast<std::size_t>(id.value());
    if (dense_.size() <= v) dense_.resize(v + 1, kNoIndex);
    dense_[v] = index;
  }
  workers_.push_back({id, kind, frames});
  local_chips_ += kind == WorkerKind::kLocalChip;
  local_workers_ += kind == WorkerKind::kLocalWorker;
}

std::optional<std::uint32_t> Registry::index_of(WorkerId id) const {
  if (id.value() >= 0 && id.value() < kDense) {  // every id below kDense that is registered is in dense_
    const auto v = static_cast<std::size_t>(id.value());
    if (v >= dense_.size() || dense_[v] == kNoIndex) return std::nullopt;
    return dense_[v];
  }
  auto it = index_.find(id);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

CallableId Registry::add_callable(Callable callable) {
  if (callables_.size() >= kMaxCallables)
    throw RegistryError("callable '" + callable.name + "': more than " + std::to_string(kMaxCallables) +
                        " callables");
  std::vector<bool> eligible(workers_.size(), false);
  if (callable.ns == Namespace::kRemote) {
    if (callable.eligible) {
      for (WorkerId id : *callable.eligible) {
        if (!is_remote(id))
          throw RegistryError("callable '" + callable.name + "': eligible worker " +
                              std::to_string(id.value()) + " is not a registered remote worker");
        auto index = index_of(id);
        eligible[*index] = true;
      }
    } else {
      for (std::size_t i = 0; i < workers_.size(); ++i) eligible[i] = workers_[i].kind == WorkerKind::kRemote;
    }
  } else if (callable.eligible) {
    throw RegistryError("callable '" + callable.name + "': only REMOTE callables take an eligible set");
  }
  callables_.push_back(std::move(callable));
  eligible_.push_back(std::move(eligible));
  return CallableId(static_cast<std::uint32_t>(callables_.size() - 1));
}

bool Registry::is_remote(WorkerId id) const {
  auto index = index_of(id);
  return index && workers_[*index].kind == WorkerKind::kRemote;
}

void Registry::check_owner(const std::string& buffer, Memory memory,
                           const std::optional<WorkerId>& owner) const {
  if (memory == Memory::kHost) {
    if (owner) throw RegistryError("buffer '" + buffer + "': host memory has no owner");
    return;
  }
  if (!owner)
    throw RegistryError("buffer '" + buffer + "': " + std::string(to_string(memory)) +
                        " memory needs an owner");
  const bool remote = memory == Memory::kRemote;
  if (!index_of(*owner) || is_remote(*owner) != remote)
    throw RegistryError("buffer '" + buffer + "': owner " + std::to_string(owner->value()) +
                        " is not a registered " + (remote ? "remote" : "local") + " worker");
}

bool Registry::eligible(CallableId id, std::uint32_t index) const {
  return eligible_[id.index()][index];
}

void Registry::add_mpi_group(std::string name, std::vector<WorkerId> ranks) {
  if (ranks.empty()) throw RegistryError("MPI group '" + name + "' has no rank");
  for (WorkerId id : ranks) {
    if (!is_remote(id))
      throw RegistryError("MPI group '" + name + "': " + std::to_string(id.value()) +
                          " is not a registered remote worker");
    for (const MpiGroup& g : mpi_groups_)
      if (std::find(g.ranks.begin(), g.ranks.end(), id) != g.ranks.end())
        throw RegistryError("MPI group '" + name + "': " + std::to_string(id.value()) + " is in two groups");
    if (std::count(ranks.begin(), ranks.end(), id) > 1)
      throw RegistryError("MPI group '" + name + "': " + std::to_string(id.value()) + " is in two groups");
  }
  mpi_groups_.push_back({std::move(name), std::move(ranks)});
}

}  // namespace dirsched
