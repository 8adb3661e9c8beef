// The root of every exception dirsched throws (docs/exit-status.md): dirsched::Error, with the kind that
// decides the CLI's exit status (cli/error_kind.hpp is the one table of it):
//   - kBadInput (2): the user's file, option or folder is wrong, or the system refused what the input
//     asked for (a pipe, a fork, threads); one line names what and where;
//   - kCannotWrite (3): an output could not be written;
//   - kInternal (134, after the message): a bug in dirsched (a driver misusing the core, a broken rule).
// The kind classes below are what a throw names when no more specific class fits; every project class
// (CoreError, ScenarioError, WriteError, ...) derives from one of them. Error derives from
// std::runtime_error alone (one std::exception base, no diamond), so `catch (const std::exception&)`
// still sees everything. Not to be confused with errors.hpp: the codes of a refused submit, which are
// values in the event log, not exceptions. Standard library only.
#pragma once

#include <stdexcept>
#include <string>

namespace dirsched {

// The order is an interface: a forked evaluation sends its kind to the parent as this digit.
enum class ErrorKind { kBadInput = 0, kCannotWrite = 1, kInternal = 2 };

class Error : public std::runtime_error {
 public:
  ErrorKind kind() const noexcept { return kind_; }

 protected:
  Error(ErrorKind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}

 private:
  ErrorKind kind_;
};

class BadInput : public Error {
 public:
  explicit BadInput(const std::string& what) : Error(ErrorKind::kBadInput, what) {}
};

class CannotWrite : public Error {
 public:
  explicit CannotWrite(const std::string& what) : Error(ErrorKind::kCannotWrite, what) {}
};

class InternalError : public Error {
 public:
  explicit InternalError(const std::string& what) : Error(ErrorKind::kInternal, what) {}
};

}  // namespace dirsched
