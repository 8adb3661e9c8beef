// How the CLI turns an exception that reached it into an exit status: the one table of it
// (docs/exit-status.md). dirsched's own exceptions are dirsched::Error (core/include/dirsched/error.hpp)
// and carry their kind; the rows below it are for what libraries throw. Three kinds:
//   - bad input (2): the user's file, option or folder is wrong; one line names what and where, and
//     nothing was written (kBadInput: ScenarioError, OutputRefused, RegistryError, RecordError, VizError,
//     ImportError, BadInput such as an unknown policy name; and std::invalid_argument and every other
//     std::exception of a library: nlohmann's errors on a file read back, filesystem errors);
//   - cannot write (3): kCannotWrite, WriteError, an output could not be written; nothing claimed,
//     nothing left;
//   - internal (134): a bug in dirsched. kInternal (CoreError from a driver that misused the core,
//     InternalError for a broken rule), std::logic_error (std::out_of_range from at(), length_error,
//     domain_error), the standard's bad_* errors of a broken program (bad_optional_access,
//     bad_variant_access, bad_function_call, bad_cast, bad_typeid, bad_weak_ptr), std::bad_alloc (the
//     documented limits keep valid inputs far below what a machine holds, so running out is reported as
//     one, naming memory), and anything not derived from std::exception. The message says "internal
//     error" and asks for a report; then the process aborts, so the status is 134 (128 + SIGABRT) and a
//     core dump is possible where enabled. Whatever the stack unwound on the way here (temporaries,
//     registered paths) is already cleaned up.
#pragma once

#include <any>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <variant>

#include "dirsched/error.hpp"
#include "dirsched/output_folder.hpp"

namespace dirsched::cli {

constexpr int kExitInternal = 134;  // what std::abort() gives: 128 + SIGABRT

struct ErrorReport {
  ErrorKind kind;
  std::string message;  // without the "dirsched: " prefix
};

// An error already classified elsewhere (in a forked child that ran an evaluation): it keeps its kind
// across the process boundary, so a bug in the child still ends the command with 134, not 2. Its message
// is the report's, already worded ("internal error (...): ..." for a bug).
class ClassifiedError : public Error {
 public:
  ClassifiedError(ErrorKind kind, const std::string& message) : Error(kind, message) {}
};

// The kind and message of the exception being handled; call it only inside a catch block.
inline ErrorReport classify_current_exception() {
  const auto internal = [](const std::string& what, const char* type) {
    return ErrorReport{ErrorKind::kInternal, std::string("internal error (") + type + "): " + what +
                                                 "; this is a bug in dirsched: please report it with the input"};
  };
  try {
    throw;
  } catch (const ClassifiedError& e) {
    return {e.kind(), e.what()};
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kInternal) return internal(e.what(), "logic error");
    return {e.kind(), e.what()};
  } catch (const std::invalid_argument& e) {
    return {ErrorKind::kBadInput, e.what()};
  } catch (const std::logic_error& e) {
    return internal(e.what(), "logic error");
  } catch (const std::bad_alloc&) {
    return internal("out of memory", "std::bad_alloc");
  } catch (const std::bad_optional_access& e) {
    return internal(e.what(), "std::bad_optional_access");
  } catch (const std::bad_variant_access& e) {
    return internal(e.what(), "std::bad_variant_access");
  } catch (const std::bad_any_cast& e) {
    return internal(e.what(), "std::bad_any_cast");
  } catch (const std::bad_cast& e) {
    return internal(e.what(), "std::bad_cast");
  } catch (const std::bad_typeid& e) {
    return internal(e.what(), "std::bad_typeid");
  } catch (const std::bad_function_call& e) {
    return internal(e.what(), "std::bad_function_call");
  } catch (const std::bad_weak_ptr& e) {
    return internal(e.what(), "std::bad_weak_ptr");
  } catch (const std::filesystem::filesystem_error& e) {  // worded as the other refusals: "PATH: why"
    std::string where = e.path1().string();
    if (!e.path2().empty()) where += ", " + e.path2().string();
    return {ErrorKind::kBadInput, (where.empty() ? "" : where + ": ") + e.code().message()};
  } catch (const std::exception& e) {
    return {ErrorKind::kBadInput, e.what()};
  } catch (...) {
    return internal("an exception of unknown type", "unknown");
  }
}

// Prints the report as one line on stderr, `dirsched: ` then `prefix` then the message, and returns the
// exit status; for an internal error it aborts instead of returning.
// `message` with each temporary's name (NAME.tmp-dirsched-PID-8HEX, what an atomic write writes first)
// shown as the file the user named, NAME (issue 53 F18: "cannot write x.json.tmp-dirsched-11786-4c1cf471").
inline std::string with_user_file_names(std::string message) {
  static const std::string kMark = ".tmp-dirsched-";
  for (std::size_t at = message.find(kMark); at != std::string::npos; at = message.find(kMark, at + 1)) {
    std::size_t end = at + kMark.size(), digits = 0, hex = 0;
    while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) ++end, ++digits;
    if (!digits || end >= message.size() || message[end] != '-') continue;
    ++end;
    while (end < message.size() && std::isxdigit(static_cast<unsigned char>(message[end])) && hex < 8) ++end, ++hex;
    if (hex == 8 && (end == message.size() || !std::isalnum(static_cast<unsigned char>(message[end]))))
      message.erase(at, end - at);
  }
  return message;
}

inline int report_current_exception(const std::string& prefix = "") {
  const ErrorReport r = classify_current_exception();
  // A write that failed names the file the user asked for, never dirsched's temporary beside it.
  std::cerr << "dirsched: " << prefix << (r.kind == ErrorKind::kCannotWrite ? with_user_file_names(r.message) : r.message)
            << std::endl;
  switch (r.kind) {
    case ErrorKind::kBadInput:
      return kExitBadInput;
    case ErrorKind::kCannotWrite:
      return kExitCannotWrite;
    case ErrorKind::kInternal:
      break;
  }
  std::abort();
}

// DIRSCHED_INTERNAL_ERROR_TEST=KIND makes a command throw as a bug would, so that tests can check the
// exit status of each kind end to end: logic_error, out_of_range, bad_alloc, bad_optional_access,
// unknown; and, for contrast, runtime_error (bad input) and write_error (cannot write).
inline void throw_for_test(const std::string& kind) {
  if (kind == "logic_error") throw std::logic_error("test: a broken internal rule");
  if (kind == "out_of_range") throw std::out_of_range("test: map::at");
  if (kind == "bad_alloc") throw std::bad_alloc();
  if (kind == "bad_optional_access") (void)std::optional<int>().value();
  if (kind == "unknown") throw 42;
  if (kind == "runtime_error") throw std::runtime_error("test: a file that is not there");
  if (kind == "write_error") throw WriteError("test/out", "No space left on device");
  throw std::invalid_argument("DIRSCHED_INTERNAL_ERROR_TEST: unknown kind '" + kind + "'");
}

}  // namespace dirsched::cli
