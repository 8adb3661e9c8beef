// The rules of the ladder's validation and dependency switches (switches.hpp): arg_guard (#1729),
// mpi_group_check (#1624), view_deps (#1902). Each rule under the switch on and off.
#include <gtest/gtest.h>

#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

using V = std::vector<std::string>;


Arg view(BufferId b, Tag tag, std::uint64_t begin, std::uint64_t end) { return {b, tag, ByteRange{begin, end}}; }

std::optional<ErrorCode> code(const SubmitResult& r) {
  return r.rejection ? std::optional<ErrorCode>(r.rejection->code) : std::nullopt;
}

// --- arg_guard: overlapping_writes (step 9) ---

TEST(ArgGuard, AWriteFollowedByAnyArgOnTheSameBytesIsOverlappingWrites) {
  for (Tag first : {Tag::kOutput, Tag::kOutputExisting, Tag::kInOut})
    for (Tag second : {Tag::kInput, Tag::kOutput, Tag::kInOut, Tag::kNoDep}) {
      FakeDriver d(Builder().chip(0), with({Switch::kArgGuard}));
      BufferId x = d.buffer("x");
      const SubmitResult r = d.single("a", 0, {{x, first}, {x, second}});
      EXPECT_EQ(code(r), ErrorCode::kOverlappingWrites) << to_string(first) << " " << to_string(second);
    }
}

TEST(ArgGuard, ReadThenWriteDisjointViewsAndOtherBuffersPass) {
  FakeDriver d(Builder().chip(0), with({Switch::kArgGuard}));
  BufferId x = d.buffer("x"), y = d.buffer("y");
  EXPECT_TRUE(d.single("a", 0, {FakeDriver::in(x), FakeDriver::out(x)}).accepted());
  EXPECT_TRUE(d.single("b", 0, {FakeDriver::in(x), FakeDriver::in(x)}).accepted());
  EXPECT_TRUE(d.single("c", 0, {view(x, Tag::kOutput, 0, 64), view(x, Tag::kOutput, 64, 128)}).accepted());
  EXPECT_TRUE(d.single("e", 0, {FakeDriver::out(x), FakeDriver::in(y)}).accepted());
  // Half-open ranges: [0, 64) and [63, 65) share byte 63; a whole-buffer arg shares a byte with any view.
  EXPECT_EQ(code(d.single("f", 0, {view(x, Tag::kOutput, 0, 64), view(x, Tag::kInput, 63, 65)})),
            ErrorCode::kOverlappingWrites);
  EXPECT_EQ(code(d.single("g", 0, {view(x, Tag::kInOut, 8, 16), FakeDriver::in(x)})), ErrorCode::kOverlappingWrites);
}

TEST(ArgGuard, MembersOfOneGroupAreNotComparedWithEachOther) {
  FakeDriver d(Builder().chip(0).chip(1), with({Switch::kArgGuard}));
  BufferId x = d.buffer("x");
  EXPECT_TRUE(d.group("g", {0, 1}, {{FakeDriver::out(x)}, {FakeDriver::out(x)}}).accepted());
  EXPECT_EQ(code(d.group("h", {0, 1}, {{}, {FakeDriver::out(x), FakeDriver::in(x)}})), ErrorCode::kOverlappingWrites);
}

TEST(ArgGuard, OffTheSameArgsAreAccepted) {
  FakeDriver d(Builder().chip(0));
  BufferId x = d.buffer("x");
  EXPECT_TRUE(d.single("a", 0, {FakeDriver::out(x), FakeDriver::in(x)}).accepted());
}

TEST(ArgGuard, OverlappingWritesIsStepNineAfterEligibility) {
  // Step 8 (target_not_eligible) wins over step 9; fail-fast comes after step 9.
  FakeDriver d(Builder().chip(0).remote(7).remote(9), with({Switch::kArgGuard}));
  BufferId r = d.buffer("r", Memory::kRemote, WorkerId(9));
  BufferId x = d.buffer("x");
  EXPECT_EQ(code(d.single("a", 7, {FakeDriver::out(r), FakeDriver::in(r)}, d.rpc())), ErrorCode::kTargetNotEligible);
  // Remote buffers are not compared (unsettled upstream).
  EXPECT_TRUE(d.single("b", 9, {FakeDriver::out(r), FakeDriver::in(r)}, d.rpc()).accepted());
  EXPECT_EQ(code(d.single("c", 0, {FakeDriver::out(x), FakeDriver::in(x)})), ErrorCode::kOverlappingWrites);
}

// --- arg_guard: sub_child_buffer (step 6) ---

TEST(ArgGuard, ASubTaskTouchingChildMemoryIsSubChildBuffer) {
  FakeDriver d(Builder().chip(1).remote(7).sub(1), with({Switch::kArgGuard}));
  BufferId dev = d.buffer("dev", Memory::kChild, WorkerId(1));
  BufferId rem = d.buffer("rem", Memory::kRemote, WorkerId(7));
  EXPECT_EQ(code(d.sub("s", {FakeDriver::in(dev)})), ErrorCode::kSubChildBuffer);
  // A member with a remote buffer anywhere in its args is sub_remote_buffer, as before.
  EXPECT_EQ(code(d.sub("t", {FakeDriver::in(dev), FakeDriver::in(rem)})), ErrorCode::kSubRemoteBuffer);
}

TEST(ArgGuard, OffASubTaskMayTouchChildMemory) {
  FakeDriver d(Builder().chip(1).sub(1));
  BufferId dev = d.buffer("dev", Memory::kChild, WorkerId(1));
  EXPECT_TRUE(d.sub("s", {FakeDriver::in(dev)}).accepted());
}

// --- mpi_group_check: mpi_group_mixed (step 3b) ---

Builder mpi_platform() {
  Builder b;
  b.chip(0).remote(10).remote(11).remote(12).remote(13);
  b.registry.add_mpi_group("m", {WorkerId(10), WorkerId(11)});
  return b;
}

TEST(MpiGroupCheck, ASameSizeListMixingRanksWithOtherWorkersIsMpiGroupMixed) {
  FakeDriver d(mpi_platform(), with({Switch::kMpiGroupCheck}));
  auto group = [&](const std::string& name, std::vector<std::int64_t> ws) {
    std::vector<std::vector<Arg>> args(ws.size());
    return code(d.group(name, ws, args, d.rpc()));
  };
  EXPECT_EQ(group("a", {10, 12}), ErrorCode::kMpiGroupMixed);
  EXPECT_EQ(group("b", {13, 11}), ErrorCode::kMpiGroupMixed);
  EXPECT_EQ(group("c", {11, 10}), std::nullopt);           // the full group, any order
  EXPECT_EQ(group("e", {10, 11, 12}), std::nullopt);       // a larger superset
  EXPECT_EQ(group("f", {12, 13}), std::nullopt);           // same size, none of its ranks
  EXPECT_EQ(d.single("s", 10, {}, d.rpc()).accepted(), true);  // singles are never checked
}

TEST(MpiGroupCheck, ItIsStepThreeBAfterDistinctnessBeforeTheNamespace) {
  FakeDriver d(mpi_platform(), with({Switch::kMpiGroupCheck}));
  EXPECT_EQ(code(d.group("a", {10, 10}, {{}, {}}, d.rpc())), ErrorCode::kWorkersNotDistinct);
  // A LOCAL_CHIP callable on a mixed list: step 3b before step 4/5.
  EXPECT_EQ(code(d.group("b", {10, 0}, {{}, {}}, d.chip())), ErrorCode::kMpiGroupMixed);
}

TEST(MpiGroupCheck, OffAMixedListIsAccepted) {
  FakeDriver d(mpi_platform());
  EXPECT_TRUE(d.group("a", {10, 12}, {{}, {}}, d.rpc()).accepted());
}

// --- view_deps ---

TEST(ViewDeps, DisjointViewsTakeNoEdgeAndAReaderWaitsForEveryLiveWriterOfItsBytes) {
  FakeDriver d(Builder().chip(0).chip(1).chip(2).chip(3), with({Switch::kViewDeps}));
  BufferId x = d.buffer("x");
  d.single("a", 0, {view(x, Tag::kOutput, 0, 64)});
  d.single("b", 1, {view(x, Tag::kOutput, 64, 128)});
  d.single("c", 2, {view(x, Tag::kInput, 60, 70)});
  d.single("e", 3, {view(x, Tag::kInput, 100, 110)});
  EXPECT_EQ(d.dispatches(), (V{"a@0", "b@1"}));
  d.run();
  EXPECT_EQ(d.recorder().find("b")->producers, V{});
  EXPECT_EQ(d.recorder().find("c")->producers, (V{"a", "b"}));
  EXPECT_EQ(d.recorder().find("e")->producers, (V{"b"}));
}

TEST(ViewDeps, APartialOverwriteLeavesTheOlderWriterLiveAndAWholeWriteReplacesEverything) {
  FakeDriver d(Builder().chip(0).chip(1).chip(2).chip(3), with({Switch::kViewDeps}));
  BufferId x = d.buffer("x");
  d.single("a", 0, {FakeDriver::out(x)});
  d.single("b", 1, {view(x, Tag::kOutput, 0, 8)});  // a stays live for its other bytes
  d.single("c", 2, {view(x, Tag::kInput, 0, 4)});   // conservative: both
  d.run();
  EXPECT_EQ(d.recorder().find("c")->producers, (V{"a", "b"}));
  d.single("w", 3, {FakeDriver::out(x)});  // the whole buffer contains every entry
  d.single("r", 0, {view(x, Tag::kInput, 0, 4)});
  d.run();
  EXPECT_EQ(d.recorder().find("r")->producers, (V{"w"}));
}

TEST(ViewDeps, OffRangesAreIgnoredTheLastWriterDecides) {
  FakeDriver d(Builder().chip(0).chip(1).chip(2));
  BufferId x = d.buffer("x");
  d.single("a", 0, {view(x, Tag::kOutput, 0, 64)});
  d.single("b", 1, {view(x, Tag::kOutput, 64, 128)});
  d.single("c", 2, {view(x, Tag::kInput, 0, 8)});
  d.run();
  EXPECT_EQ(d.recorder().find("b")->producers, V{});  // outputs do not look up
  EXPECT_EQ(d.recorder().find("c")->producers, (V{"b"}));
}

TEST(ViewDeps, InOutLooksUpThenInsertsAndSkipsTheTaskItself) {
  FakeDriver d(Builder().chip(0).chip(1), with({Switch::kViewDeps}));
  BufferId x = d.buffer("x");
  d.single("a", 0, {view(x, Tag::kInOut, 0, 8), view(x, Tag::kInOut, 4, 12)});
  d.single("b", 1, {view(x, Tag::kInOut, 8, 16)});
  d.run();
  EXPECT_EQ(d.recorder().find("a")->producers, V{});
  EXPECT_EQ(d.recorder().find("b")->producers, (V{"a"}));
}

}  // namespace
}  // namespace dirsched::testing
