// Submit-time validation: every error code of the contract notes, the order they are checked in,
// and that a refused submit leaves every piece of state as it was.
#include <gtest/gtest.h>

#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

ErrorCode code_of(const SubmitResult& r) {
  EXPECT_FALSE(r.accepted());
  return r.rejection ? r.rejection->code : ErrorCode::kRunFailed;
}

FakeDriver platform() {
  return FakeDriver(Builder().chip(0).chip(1).local(4).remote(7).remote(9).sub(2));
}

TEST(Validation, SingleWithoutWorkerIsMissingWorker) {
  FakeDriver d = platform();
  SubmitRequest r = d.single_request("a", 0);
  r.worker.reset();
  EXPECT_EQ(code_of(d.submit(r)), ErrorCode::kMissingWorker);
}

TEST(Validation, GroupWithoutWorkersListIsMissingWorker) {
  FakeDriver d = platform();
  SubmitRequest r = d.group_request("g", {0, 1});
  r.workers.reset();
  EXPECT_EQ(code_of(d.submit(r)), ErrorCode::kMissingWorker);
}

TEST(Validation, NonIntegerIdIsWorkerNotInteger) {
  for (const char* shown : {"true", "1.0", "\"1\"", "null", "{}"}) {
    FakeDriver d = platform();
    SubmitRequest r = d.single_request("a", 0);
    r.worker = WorkerArg::not_integer(shown);
    SubmitResult res = d.submit(r);
    EXPECT_EQ(code_of(res), ErrorCode::kWorkerNotInteger) << shown;
    EXPECT_NE(res.rejection->message.find(shown), std::string::npos) << res.rejection->message;
  }
}

TEST(Validation, NegativeIdIsWorkerNegative) {
  FakeDriver d = platform();
  EXPECT_EQ(code_of(d.single("a", -1)), ErrorCode::kWorkerNegative);
}

TEST(Validation, EachIdIsCheckedForTypeThenSignAndTheFirstBadEntryDecides) {
  FakeDriver d = platform();
  // [-1, true]: entry 0 is an integer but negative, so worker_negative, not worker_not_integer.
  SubmitRequest r = d.group_request("g", {-1, 0});
  (*r.workers)[1] = WorkerArg::not_integer("true");
  EXPECT_EQ(code_of(d.submit(r)), ErrorCode::kWorkerNegative);
  // [true, -1]: entry 0 decides.
  SubmitRequest q = d.group_request("h", {0, -1});
  (*q.workers)[0] = WorkerArg::not_integer("true");
  EXPECT_EQ(code_of(d.submit(q)), ErrorCode::kWorkerNotInteger);
}

TEST(Validation, GroupCountDifferentFromMembersIsWorkersCountMismatch) {
  FakeDriver d = platform();
  SubmitRequest r = d.group_request("g", {0, 1});
  r.args.resize(3);
  EXPECT_EQ(code_of(d.submit(r)), ErrorCode::kWorkersCountMismatch);
}

TEST(Validation, EmptyGroupIsWorkersCountMismatch) {
  FakeDriver d = platform();
  EXPECT_EQ(code_of(d.group("g", {})), ErrorCode::kWorkersCountMismatch);
}

TEST(Validation, RepeatedIdInGroupIsWorkersNotDistinct) {
  FakeDriver d = platform();
  EXPECT_EQ(code_of(d.group("g", {0, 1, 0})), ErrorCode::kWorkersNotDistinct);
}

TEST(Validation, CountMismatchIsCheckedBeforeDistinctness) {
  FakeDriver d = platform();
  SubmitRequest r = d.group_request("g", {0, 0});
  r.args.resize(3);
  EXPECT_EQ(code_of(d.submit(r)), ErrorCode::kWorkersCountMismatch);
}

TEST(Validation, NegativeIsCheckedBeforeCount) {
  FakeDriver d = platform();
  SubmitRequest r = d.group_request("g", {0, -2});
  r.args.resize(5);
  EXPECT_EQ(code_of(d.submit(r)), ErrorCode::kWorkerNegative);
}

TEST(Validation, UnknownIdIsWorkerNotRegistered) {
  FakeDriver d = platform();
  EXPECT_EQ(code_of(d.single("a", 2)), ErrorCode::kWorkerNotRegistered);
  EXPECT_EQ(code_of(d.group("g", {0, 3})), ErrorCode::kWorkerNotRegistered);
}

TEST(Validation, DistinctnessIsCheckedBeforeRegistration) {
  FakeDriver d = platform();
  EXPECT_EQ(code_of(d.group("g", {5, 5})), ErrorCode::kWorkersNotDistinct);
}

TEST(Validation, LocalCallableOnRemoteWorkerIsRejected) {
  FakeDriver d = platform();
  EXPECT_EQ(code_of(d.single("a", 7)), ErrorCode::kLocalCallableRemoteTarget);
  EXPECT_EQ(code_of(d.single("b", 9, {}, d.py())), ErrorCode::kLocalCallableRemoteTarget);
}

TEST(Validation, RemoteTargetIsCheckedBeforeRegistration) {
  FakeDriver d = platform();
  // Member 1 names no worker, member 0 a remote one: step 5 comes before step 7.
  EXPECT_EQ(code_of(d.group("g", {7, 8})), ErrorCode::kLocalCallableRemoteTarget);
}

TEST(Validation, ChipCallableOnLocalWorkerIsNamespaceMismatch) {
  FakeDriver d = platform();
  EXPECT_EQ(code_of(d.single("a", 4)), ErrorCode::kNamespaceMismatch);
}

TEST(Validation, PythonCallableOnChipIsNamespaceMismatch) {
  FakeDriver d = platform();
  EXPECT_EQ(code_of(d.single("a", 0, {}, d.py())), ErrorCode::kNamespaceMismatch);
  EXPECT_TRUE(d.single("b", 4, {}, d.py()).accepted());
}

TEST(Validation, NamespaceIsCheckedBeforeRemoteTargetAcrossMembers) {
  FakeDriver d = platform();
  // Member 0 has a namespace mismatch, member 1 a remote target: the namespace (step 4) comes first,
  // whichever member it is in.
  EXPECT_EQ(code_of(d.group("g", {4, 7})), ErrorCode::kNamespaceMismatch);
  EXPECT_EQ(code_of(d.group("h", {7, 4})), ErrorCode::kNamespaceMismatch);
}

TEST(Validation, RemoteCallableOutsideItsEligibleSetIsTargetNotEligible) {
  FakeDriver d = platform();
  CallableId only7 = d.add_remote_callable("only7", {WorkerId(7)});
  EXPECT_EQ(code_of(d.single("a", 9, {}, only7)), ErrorCode::kTargetNotEligible);
  EXPECT_TRUE(d.single("b", 7, {}, only7).accepted());
}

TEST(Validation, RemoteCallableOnLocalWorkerIsTargetNotEligible) {
  FakeDriver d = platform();
  EXPECT_EQ(code_of(d.single("a", 0, {}, d.rpc())), ErrorCode::kTargetNotEligible);
}

TEST(Validation, RemoteBufferBindsTheTargetToItsOwner) {
  FakeDriver d = platform();
  BufferId kv = d.buffer("kv", Memory::kRemote, WorkerId(7));
  EXPECT_EQ(code_of(d.single("a", 9, {FakeDriver::inout(kv)}, d.rpc())), ErrorCode::kTargetNotEligible);
  EXPECT_TRUE(d.single("b", 7, {FakeDriver::inout(kv)}, d.rpc()).accepted());
}

TEST(Validation, ChildMemoryBufferBindsTheTargetToItsOwner) {
  FakeDriver d = platform();
  BufferId dev = d.buffer("dev", Memory::kChild, WorkerId(1));
  EXPECT_EQ(code_of(d.single("a", 0, {FakeDriver::in(dev)})), ErrorCode::kTargetNotEligible);
  EXPECT_TRUE(d.single("b", 1, {FakeDriver::in(dev)}).accepted());
}

TEST(Validation, EachGroupMemberIsCheckedAgainstItsOwnTarget) {
  FakeDriver d = platform();
  BufferId dev1 = d.buffer("dev1", Memory::kChild, WorkerId(1));
  // Member 1 touches chip 1's memory and targets chip 1: fine. Swapped targets: refused.
  EXPECT_TRUE(d.group("ok", {0, 1}, {{}, {FakeDriver::in(dev1)}}).accepted());
  EXPECT_EQ(code_of(d.group("bad", {1, 0}, {{}, {FakeDriver::in(dev1)}})), ErrorCode::kTargetNotEligible);
}

TEST(Validation, NamespaceIsCheckedBeforeEligibility) {
  FakeDriver d = platform();
  BufferId dev1 = d.buffer("dev1", Memory::kChild, WorkerId(1));
  EXPECT_EQ(code_of(d.single("a", 4, {FakeDriver::in(dev1)})), ErrorCode::kNamespaceMismatch);
}

TEST(Validation, SubWithWorkerIdIsSubTakesNoWorker) {
  FakeDriver d = platform();
  SubmitRequest r;
  r.kind = TaskKind::kSub;
  r.name = "s";
  r.callable = d.py();
  r.args.resize(1);
  r.worker = WorkerArg(WorkerId(0));
  EXPECT_EQ(code_of(d.submit(r)), ErrorCode::kSubTakesNoWorker);
  r.worker.reset();
  r.kind = TaskKind::kSubGroup;
  r.workers.emplace();
  EXPECT_EQ(code_of(d.submit(r)), ErrorCode::kSubTakesNoWorker);
}

TEST(Validation, SubOfChipCallableIsSubCallableNotPython) {
  FakeDriver d = platform();
  SubmitRequest r;
  r.kind = TaskKind::kSub;
  r.name = "s";
  r.callable = d.chip();
  r.args.resize(1);
  EXPECT_EQ(code_of(d.submit(r)), ErrorCode::kSubCallableNotPython);
}

TEST(Validation, SubTouchingRemoteMemoryIsSubRemoteBuffer) {
  FakeDriver d = platform();
  BufferId kv = d.buffer("kv", Memory::kRemote, WorkerId(7));
  EXPECT_EQ(code_of(d.sub("s", {FakeDriver::in(kv)})), ErrorCode::kSubRemoteBuffer);
}

TEST(Validation, SubWorkerIdIsCheckedBeforeCallableNamespace) {
  FakeDriver d = platform();
  SubmitRequest r;
  r.kind = TaskKind::kSub;
  r.name = "s";
  r.callable = d.chip();
  r.args.resize(1);
  r.worker = WorkerArg::not_integer("true");
  EXPECT_EQ(code_of(d.submit(r)), ErrorCode::kSubTakesNoWorker);
}

// --- the runtime's effective order (steps 1-8), new codes and ids beyond the id type ---

TEST(Validation, LocalCallableAimedAtAnUnregisteredIdIsNamespaceMismatchWhenNoChildRunsItHere) {
  // A chips-only registry (the runtime's level 3): no local_worker runs LOCAL_PYTHON here.
  FakeDriver d(Builder().chip(0).chip(1).remote(7));
  EXPECT_EQ(code_of(d.single("a", 99, {}, d.py())), ErrorCode::kNamespaceMismatch);
  EXPECT_EQ(code_of(d.single("b", 7, {}, d.py())), ErrorCode::kNamespaceMismatch);
  // A chip callable is at home here: an unknown id is then a registration failure.
  EXPECT_EQ(code_of(d.single("c", 99)), ErrorCode::kWorkerNotRegistered);
  EXPECT_EQ(code_of(d.single("e", 7)), ErrorCode::kLocalCallableRemoteTarget);
}

TEST(Validation, LocalCallableAimedAtAnUnregisteredIdIsWorkerNotRegisteredWhenAChildRunsItHere) {
  FakeDriver d = platform();
  EXPECT_EQ(code_of(d.single("a", 99, {}, d.py())), ErrorCode::kWorkerNotRegistered);
  EXPECT_EQ(code_of(d.single("b", 7, {}, d.py())), ErrorCode::kLocalCallableRemoteTarget);
}

TEST(Validation, ChildMemoryArgAimedAtAnUnregisteredIdIsTargetNotEligible) {
  FakeDriver d = platform();
  BufferId dev = d.buffer("dev", Memory::kChild, WorkerId(1));
  // Tensor data (step 6) comes before registration (step 7).
  EXPECT_EQ(code_of(d.single("a", 99, {FakeDriver::in(dev)})), ErrorCode::kTargetNotEligible);
  EXPECT_EQ(code_of(d.single("b", 99)), ErrorCode::kWorkerNotRegistered);
}

TEST(Validation, RemoteTargetIsCheckedBeforeTensorData) {
  FakeDriver d = platform();
  BufferId dev = d.buffer("dev", Memory::kChild, WorkerId(1));
  EXPECT_EQ(code_of(d.single("a", 7, {FakeDriver::in(dev)})), ErrorCode::kLocalCallableRemoteTarget);
}

TEST(Validation, LocalCallableTouchingRemoteMemoryIsTargetNotEligible) {
  FakeDriver d = platform();
  BufferId kv = d.buffer("kv", Memory::kRemote, WorkerId(7));
  EXPECT_EQ(code_of(d.single("a", 0, {FakeDriver::in(kv)})), ErrorCode::kTargetNotEligible);
  // At step 6, so before registration.
  EXPECT_EQ(code_of(d.single("b", 99, {FakeDriver::in(kv)})), ErrorCode::kTargetNotEligible);
}

TEST(Validation, RemoteCallableWritingAHostBufferIsRemoteHostBufferWritten) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  for (Tag tag : {Tag::kOutput, Tag::kInOut, Tag::kOutputExisting, Tag::kNoDep})
    EXPECT_EQ(code_of(d.single("w" + std::string(to_string(tag)), 7, {{x, tag}}, d.rpc())),
              ErrorCode::kRemoteHostBufferWritten)
        << to_string(tag);
  EXPECT_TRUE(d.single("r", 7, {FakeDriver::in(x)}, d.rpc()).accepted());
  EXPECT_EQ(to_string(ErrorCode::kRemoteHostBufferWritten), "remote_host_buffer_written");
}

TEST(Validation, HostBufferWriteIsCheckedBeforeRegistrationAndRemoteOwner) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  BufferId kv = d.buffer("kv", Memory::kRemote, WorkerId(7));
  // kv owned by 7 on target 9 is a step-8 failure; the host write in the second arg is step 6.
  EXPECT_EQ(code_of(d.single("a", 9, {FakeDriver::inout(kv), FakeDriver::out(x)}, d.rpc())),
            ErrorCode::kRemoteHostBufferWritten);
  EXPECT_EQ(code_of(d.single("b", 99, {FakeDriver::out(x)}, d.rpc())), ErrorCode::kRemoteHostBufferWritten);
  EXPECT_EQ(code_of(d.single("c", 9, {FakeDriver::inout(kv)}, d.rpc())), ErrorCode::kTargetNotEligible);
}

TEST(Validation, RegistrationIsCheckedBeforeTheEligibleSet) {
  FakeDriver d = platform();
  // Member 0 is a local worker (outside the REMOTE callable's eligible set), member 1 names nothing.
  EXPECT_EQ(code_of(d.group("g", {0, 99}, {{}, {}}, d.rpc())), ErrorCode::kWorkerNotRegistered);
  EXPECT_EQ(code_of(d.group("h", {0, 9}, {{}, {}}, d.rpc())), ErrorCode::kTargetNotEligible);
}

TEST(Validation, EmptySubGroupIsEmptyGroup) {
  FakeDriver d = platform();
  EXPECT_EQ(code_of(d.sub_group("s", 0)), ErrorCode::kEmptyGroup);
  EXPECT_EQ(to_string(ErrorCode::kEmptyGroup), "empty_group");
}

TEST(Validation, SubNamespaceIsCheckedBeforeTheEmptyGroup) {
  FakeDriver d = platform();
  SubmitRequest r;
  r.kind = TaskKind::kSubGroup;
  r.name = "s";
  r.callable = d.chip();
  EXPECT_EQ(code_of(d.submit(r)), ErrorCode::kSubCallableNotPython);
}

TEST(Validation, EmptyNextLevelGroupWithAnEmptyWorkersListIsWorkersCountMismatch) {
  FakeDriver d = platform();
  SubmitRequest r = d.group_request("g", {});
  r.args.clear();
  EXPECT_EQ(code_of(d.submit(r)), ErrorCode::kWorkersCountMismatch);
}

TEST(Validation, IdBeyondTheIdTypeIsWorkerNotRegisteredNeverAWrappedValue) {
  FakeDriver d = platform();
  SubmitRequest r = d.single_request("a", 0);
  r.worker = WorkerArg::out_of_range("9223372036854775808", false);
  SubmitResult res = d.submit(r);
  EXPECT_EQ(code_of(res), ErrorCode::kWorkerNotRegistered);
  EXPECT_NE(res.rejection->message.find("9223372036854775808"), std::string::npos) << res.rejection->message;
  SubmitRequest g = d.group_request("g", {0, 1});
  (*g.workers)[1] = WorkerArg::out_of_range("18446744073709551615", false);
  EXPECT_EQ(code_of(d.submit(g)), ErrorCode::kWorkerNotRegistered);
}

TEST(Validation, NegativeIdBeyondTheIdTypeIsWorkerNegative) {
  FakeDriver d = platform();
  SubmitRequest r = d.single_request("a", 0);
  r.worker = WorkerArg::out_of_range("-99999999999999999999", true);
  EXPECT_EQ(code_of(d.submit(r)), ErrorCode::kWorkerNegative);
}

TEST(Validation, EqualIdsBeyondTheIdTypeAreNotDistinct) {
  FakeDriver d = platform();
  SubmitRequest r = d.group_request("g", {0, 1, 4});
  (*r.workers)[0] = WorkerArg::out_of_range("18446744073709551615", false);
  (*r.workers)[2] = WorkerArg::out_of_range("18446744073709551615", false);
  EXPECT_EQ(code_of(d.submit(r)), ErrorCode::kWorkersNotDistinct);
  (*r.workers)[2] = WorkerArg::out_of_range("18446744073709551614", false);
  EXPECT_EQ(code_of(d.submit(r)), ErrorCode::kWorkerNotRegistered);
}

TEST(Validation, IdBeyondTheIdTypeOnAChipsOnlyRegistryFailsTheNamespaceFirst) {
  FakeDriver d(Builder().chip(0));
  SubmitRequest r = d.single_request("a", 0);
  r.callable = d.py();
  r.worker = WorkerArg::out_of_range("9223372036854775808", false);
  EXPECT_EQ(code_of(d.submit(r)), ErrorCode::kNamespaceMismatch);
}

TEST(Validation, RejectedSubmitChangesNoState) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.duration("a", 5);
  ASSERT_TRUE(d.single("a", 0, {FakeDriver::out(x)}).accepted());
  ASSERT_TRUE(d.single("b", 0, {FakeDriver::in(x)}).accepted());
  ASSERT_TRUE(d.group("g", {0, 1}).accepted());
  const std::string before = d.core().dump();
  const std::size_t dispatched = d.dispatches().size();
  // A refused group that would have produced x, consumed it, and queued on busy chip 0.
  SubmitRequest r = d.group_request("bad", {0, 0});
  r.args = {{FakeDriver::out(x)}, {FakeDriver::in(x)}};
  EXPECT_EQ(code_of(d.submit(r)), ErrorCode::kWorkersNotDistinct);
  EXPECT_EQ(code_of(d.single("bad2", 7, {FakeDriver::out(x)})), ErrorCode::kLocalCallableRemoteTarget);
  EXPECT_EQ(d.core().dump(), before);
  EXPECT_EQ(d.core().task_count(), 3u);
  EXPECT_EQ(d.dispatches().size(), dispatched);
  // And x still belongs to a: c, which reads x, waits for a and nothing else.
  ASSERT_TRUE(d.single("c", 1, {FakeDriver::in(x)}).accepted());
  EXPECT_EQ(d.trace().lines.back(), "pending c");
  d.run();
  EXPECT_EQ(d.state("c"), TaskState::kCompleted);
}

TEST(Validation, RejectionIsReportedToTheObserverWithItsCode) {
  FakeDriver d = platform();
  d.single("a", -5);
  ASSERT_FALSE(d.trace().lines.empty());
  EXPECT_EQ(d.trace().lines.back(), "reject a worker_negative");
  EXPECT_EQ(d.state("a"), TaskState::kRejected);
}

TEST(Validation, ErrorCodesKeepTheirStableSpellings) {
  EXPECT_EQ(to_string(ErrorCode::kMissingWorker), "missing_worker");
  EXPECT_EQ(to_string(ErrorCode::kWorkerNotInteger), "worker_not_integer");
  EXPECT_EQ(to_string(ErrorCode::kWorkerNegative), "worker_negative");
  EXPECT_EQ(to_string(ErrorCode::kWorkersCountMismatch), "workers_count_mismatch");
  EXPECT_EQ(to_string(ErrorCode::kWorkersNotDistinct), "workers_not_distinct");
  EXPECT_EQ(to_string(ErrorCode::kWorkerNotRegistered), "worker_not_registered");
  EXPECT_EQ(to_string(ErrorCode::kLocalCallableRemoteTarget), "local_callable_remote_target");
  EXPECT_EQ(to_string(ErrorCode::kNamespaceMismatch), "namespace_mismatch");
  EXPECT_EQ(to_string(ErrorCode::kTargetNotEligible), "target_not_eligible");
  EXPECT_EQ(to_string(ErrorCode::kSubTakesNoWorker), "sub_takes_no_worker");
  EXPECT_EQ(to_string(ErrorCode::kSubCallableNotPython), "sub_callable_not_python");
  EXPECT_EQ(to_string(ErrorCode::kSubRemoteBuffer), "sub_remote_buffer");
  EXPECT_EQ(to_string(ErrorCode::kRemoteHostBufferWritten), "remote_host_buffer_written");
  EXPECT_EQ(to_string(ErrorCode::kEmptyGroup), "empty_group");
  EXPECT_EQ(error_code_from_string("remote_host_buffer_written"), ErrorCode::kRemoteHostBufferWritten);
  EXPECT_EQ(error_code_from_string("target_not_eligible"), ErrorCode::kTargetNotEligible);
}

TEST(Registration, DuplicateOrNegativeWorkerIdIsAConfigurationError) {
  Registry r;
  r.add_next_level(WorkerId(3), WorkerKind::kLocalChip);
  EXPECT_THROW(r.add_next_level(WorkerId(3), WorkerKind::kRemote), RegistryError);
  EXPECT_THROW(r.add_next_level(WorkerId(-1), WorkerKind::kRemote), RegistryError);
}

TEST(Registration, EligibleSetMustNameRemoteWorkers) {
  Registry r;
  r.add_next_level(WorkerId(0), WorkerKind::kLocalChip);
  r.add_next_level(WorkerId(7), WorkerKind::kRemote);
  EXPECT_THROW(r.add_callable({"x", Namespace::kRemote, std::vector<WorkerId>{WorkerId(0)}}), RegistryError);
  EXPECT_THROW(r.add_callable({"y", Namespace::kRemote, std::vector<WorkerId>{WorkerId(8)}}), RegistryError);
  EXPECT_NO_THROW(r.add_callable({"z", Namespace::kRemote, std::vector<WorkerId>{WorkerId(7)}}));
}

}  // namespace
}  // namespace dirsched::testing
