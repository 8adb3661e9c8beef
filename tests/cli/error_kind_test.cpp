// The error root (core/include/dirsched/error.hpp) and the CLI's one table (cli/error_kind.hpp): every
// project exception class is a dirsched::Error of its kind, on one std::exception base, and classifies
// to the kind and message it had before the root (docs/exit-status.md); library exceptions keep their
// rows. cli.exit-status checks the same statuses end to end.
#include "error_kind.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <filesystem>
#include <functional>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>

#include "dirsched/core_error.hpp"
#include "dirsched/error.hpp"
#include "dirsched/invariants.hpp"
#include "dirsched/json_reader.hpp"
#include "dirsched/output_folder.hpp"
#include "dirsched/record/summary.hpp"
#include "dirsched/registry.hpp"
#include "dirsched/runtime.hpp"
#include "dirsched/strace_import.hpp"
#include "dirsched/viz.hpp"

namespace dirsched {
namespace {

// One std::exception base path: a second one (a diamond) would make these conversions ambiguous.
template <typename E>
constexpr bool one_root() {
  return std::is_convertible_v<E*, Error*> && std::is_convertible_v<E*, std::exception*> &&
         std::is_convertible_v<E*, std::runtime_error*> && !std::is_convertible_v<E*, std::logic_error*>;
}
static_assert(one_root<BadInput>() && one_root<CannotWrite>() && one_root<InternalError>());
static_assert(one_root<CoreError>() && one_root<InvariantViolation>() && one_root<RegistryError>());
static_assert(one_root<RuntimeError>() && one_root<ScenarioError>() && one_root<OutputRefused>());
static_assert(one_root<WriteError>() && one_root<record::RecordError>() && one_root<viz::VizError>());
static_assert(one_root<ImportError>() && one_root<cli::ClassifiedError>());
static_assert(std::is_base_of_v<InternalError, CoreError> && std::is_base_of_v<CannotWrite, WriteError>);
static_assert(static_cast<int>(ErrorKind::kBadInput) == 0 && static_cast<int>(ErrorKind::kCannotWrite) == 1 &&
              static_cast<int>(ErrorKind::kInternal) == 2);  // the digit a forked evaluation sends

cli::ErrorReport classify(const std::function<void()>& thrower) {
  try {
    thrower();
  } catch (...) {
    return cli::classify_current_exception();
  }
  ADD_FAILURE() << "nothing was thrown";
  return {ErrorKind::kInternal, ""};
}

std::string internal(const std::string& what, const std::string& type) {
  return "internal error (" + type + "): " + what +
         "; this is a bug in dirsched: please report it with the input";
}

// The class reports `kind`, std::exception sees it, and the table gives `kind` and `message`.
template <typename E>
void expect_kind(const E& e, ErrorKind kind, const std::string& message) {
  SCOPED_TRACE(e.what());
  EXPECT_EQ(e.kind(), kind);
  const cli::ErrorReport r = classify([&] { throw e; });
  EXPECT_EQ(r.kind, kind);
  EXPECT_EQ(r.message, message);
  bool seen = false;
  try {
    throw e;
  } catch (const std::exception& any) {
    seen = std::string(any.what()) == e.what();
  }
  EXPECT_TRUE(seen);
}

TEST(ErrorRoot, EveryProjectClassReportsItsKind) {
  const auto bad = ErrorKind::kBadInput;
  expect_kind(BadInput("a bad option"), bad, "a bad option");
  expect_kind(CannotWrite("cannot write x: full"), ErrorKind::kCannotWrite, "cannot write x: full");
  expect_kind(InternalError("a broken rule"), ErrorKind::kInternal, internal("a broken rule", "logic error"));
  // The core: a driver's misuse is a bug; a registry described wrongly and an invariant, bad input (as
  // std::invalid_argument and std::runtime_error were).
  expect_kind(CoreError(CoreErrorCode::kUnknownTask, "unknown task 9"), ErrorKind::kInternal,
              internal("unknown task 9", "logic error"));
  expect_kind(RegistryError("worker 3 registered twice"), bad, "worker 3 registered twice");
  expect_kind(InvariantViolation(Violation{7, "fifo", "b before a", ""}), bad,
              "invariant fifo violated at event seq 7: b before a");
  expect_kind(RuntimeError("callable 'x' has no registered function"), bad,
              "callable 'x' has no registered function");
  expect_kind(ScenarioError("s.json", "workers[0]", "expected an object"), bad,
              "s.json: workers[0]: expected an object");
  expect_kind(OutputRefused("out: not a run folder"), bad, "out: not a run folder");
  expect_kind(WriteError("out/summary.json", "No space left on device"), ErrorKind::kCannotWrite,
              "cannot write out/summary.json: No space left on device");
  expect_kind(record::RecordError("summary.json: makespan: expected a number"), bad,
              "summary.json: makespan: expected a number");
  expect_kind(viz::VizError("events.jsonl line 3: t: expected a number"), bad,
              "events.jsonl line 3: t: expected a number");
  expect_kind(ImportError("log:4: a completion without its dispatch"), bad,
              "log:4: a completion without its dispatch");
}

TEST(ErrorRoot, AClassifiedErrorKeepsItsKindAndWording) {
  for (const ErrorKind kind : {ErrorKind::kBadInput, ErrorKind::kCannotWrite, ErrorKind::kInternal})
    expect_kind(cli::ClassifiedError(kind, "variant-0001 seed 3: as worded in the child"), kind,
                "variant-0001 seed 3: as worded in the child");
}

TEST(ErrorRoot, LibraryExceptionsKeepTheirRows) {
  const auto bad = ErrorKind::kBadInput;
  EXPECT_EQ(classify([] { throw std::runtime_error("a file"); }).kind, bad);
  EXPECT_EQ(classify([] { throw std::invalid_argument("stoll"); }).kind, bad);
  EXPECT_EQ(classify([] { const nlohmann::json j = nlohmann::json::parse("{"); }).kind, bad);
  EXPECT_EQ(classify([] {
              throw std::filesystem::filesystem_error("x", std::make_error_code(std::errc::io_error));
            }).kind,
            bad);
  // A filesystem error names its path first, as the project's own refusals do, without the library's
  // "filesystem error: status:" prefix.
  const auto loop = std::make_error_code(std::errc::too_many_symbolic_link_levels);
  EXPECT_EQ(classify([&] { throw std::filesystem::filesystem_error("status", "run/summary.json", loop); }).message,
            "run/summary.json: " + loop.message());
  EXPECT_EQ(classify([&] { throw std::filesystem::filesystem_error("copy", "a", "b", loop); }).message,
            "a, b: " + loop.message());
  EXPECT_EQ(classify([&] { throw std::filesystem::filesystem_error("status", loop); }).message, loop.message());
  EXPECT_EQ(classify([] { throw std::logic_error("rule"); }).message, internal("rule", "logic error"));
  EXPECT_EQ(classify([] { throw std::out_of_range("map::at"); }).message, internal("map::at", "logic error"));
  EXPECT_EQ(classify([] { throw std::bad_alloc(); }).message, internal("out of memory", "std::bad_alloc"));
  EXPECT_EQ(classify([] { (void)std::optional<int>().value(); }).kind, ErrorKind::kInternal);
  EXPECT_EQ(classify([] { throw 42; }).message, internal("an exception of unknown type", "unknown"));
}

TEST(ErrorRoot, ExitStatusOfEachKind) {
  const auto status = [](const std::function<void()>& thrower) {
    const rlimit none{0, 0};
    setrlimit(RLIMIT_CORE, &none);  // an abort (the death tests below) leaves no core file
    try {
      thrower();
    } catch (...) {
      return cli::report_current_exception();
    }
    return -1;
  };
  EXPECT_EQ(status([] { throw ScenarioError("s.json", "", "missing"); }), 2);
  EXPECT_EQ(status([] { throw RegistryError("bad registry"); }), 2);
  EXPECT_EQ(status([] { throw WriteError("out", "EIO"); }), 3);
  EXPECT_EQ(status([] { throw cli::ClassifiedError(ErrorKind::kCannotWrite, "child"); }), 3);
  EXPECT_DEATH(status([] { throw CoreError(CoreErrorCode::kRunOrder, "end_run with none open"); }),
               "internal error \\(logic error\\): end_run with none open; this is a bug");
  EXPECT_DEATH(status([] { throw InternalError("recorder: a group READY twice"); }),
               "internal error \\(logic error\\): recorder: a group READY twice");
}

}  // namespace
}  // namespace dirsched
