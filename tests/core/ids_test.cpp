#include "dirsched/ids.hpp"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>

namespace dirsched {
namespace {

TEST(WorkerIdType, AcceptsEveryIntegerType) {
  static_assert(std::is_constructible_v<WorkerId, int>);
  static_assert(std::is_constructible_v<WorkerId, long>);
  static_assert(std::is_constructible_v<WorkerId, std::int64_t>);
  static_assert(std::is_constructible_v<WorkerId, unsigned>);
  static_assert(std::is_constructible_v<WorkerId, short>);
  EXPECT_EQ(WorkerId(7).value(), 7);
}

TEST(WorkerIdType, RefusesBooleansAtCompileTime) {
  static_assert(!std::is_constructible_v<WorkerId, bool>);
  static_assert(!std::is_convertible_v<bool, WorkerId>);
  SUCCEED();
}

TEST(WorkerIdType, RefusesFloatingPointAtCompileTime) {
  static_assert(!std::is_constructible_v<WorkerId, double>);
  static_assert(!std::is_constructible_v<WorkerId, float>);
  static_assert(!std::is_constructible_v<WorkerId, long double>);
  SUCCEED();
}

TEST(WorkerIdType, RefusesCharactersAndStringsAtCompileTime) {
  static_assert(!std::is_constructible_v<WorkerId, char>);
  static_assert(!std::is_constructible_v<WorkerId, signed char>);
  static_assert(!std::is_constructible_v<WorkerId, unsigned char>);
  static_assert(!std::is_constructible_v<WorkerId, char32_t>);
  static_assert(!std::is_constructible_v<WorkerId, const char*>);
  static_assert(!std::is_constructible_v<WorkerId, std::string>);
  SUCCEED();
}

TEST(WorkerIdType, IsNeverImplicitlyConvertedFromAnInteger) {
  static_assert(!std::is_convertible_v<int, WorkerId>);
  static_assert(!std::is_constructible_v<WorkerArg, int>);
  static_assert(!std::is_constructible_v<WorkerArg, bool>);
  static_assert(!std::is_constructible_v<WorkerArg, double>);
  static_assert(std::is_constructible_v<WorkerArg, WorkerId>);
  SUCCEED();
}

TEST(WorkerArgValue, KeepsHowANonIntegerWasWritten) {
  WorkerArg a = WorkerArg::not_integer("1.0");
  EXPECT_FALSE(a.is_integer());
  EXPECT_EQ(a.shown(), "1.0");
  WorkerArg b = WorkerId(-3);
  EXPECT_TRUE(b.is_integer());
  EXPECT_EQ(b.value(), -3);
}

TEST(WorkerArgValue, KeepsAnIntegerBeyondTheIdTypeAsAnIntegerThatIsNotWrapped) {
  WorkerArg big = WorkerArg::out_of_range("9223372036854775808", false);
  EXPECT_TRUE(big.is_integer());
  EXPECT_FALSE(big.in_range());
  EXPECT_FALSE(big.is_negative());
  EXPECT_EQ(big.text(), "9223372036854775808");
  EXPECT_TRUE(big.same_integer(WorkerArg::out_of_range("9223372036854775808", false)));
  EXPECT_FALSE(big.same_integer(WorkerArg(WorkerId(0))));
  EXPECT_TRUE(WorkerArg::out_of_range("-9223372036854775809", true).is_negative());
  EXPECT_FALSE(WorkerArg::not_integer("true").same_integer(WorkerArg::not_integer("true")));
  EXPECT_TRUE(WorkerArg(WorkerId(-3)).is_negative());
  EXPECT_EQ(WorkerArg(WorkerId(12)).text(), "12");
}

TEST(HandleType, RefusesBareIntegers) {
  static_assert(!std::is_constructible_v<TaskId, int>);
  static_assert(!std::is_constructible_v<TaskId, bool>);
  static_assert(std::is_constructible_v<TaskId, std::uint32_t>);
  EXPECT_FALSE(TaskId().valid());
  EXPECT_TRUE(TaskId(0u).valid());
}

}  // namespace
}  // namespace dirsched
