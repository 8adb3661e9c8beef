// Distinct id types for the scheduler core.
//
// A worker id is a stable, caller-chosen integer (any non-negative value, not necessarily contiguous).
// The contract forbids coercing booleans, floats or characters into ids, so WorkerId accepts integer
// types only: `WorkerId{true}`, `WorkerId{1.0}` and `WorkerId{'1'}` do not compile (tests check this
// with std::is_constructible). A negative value is representable on purpose: it is a caller mistake
// that submit reports as `worker_negative`, not a type error.
//
// Untyped front ends (the scenario loader, a language binding) hand over what the caller wrote as a
// WorkerArg, which is either an integer or "not an integer, shown as ...". Validation of both lives in
// the core, in one place, in the contract's order.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace dirsched {

namespace detail {
template <typename T>
inline constexpr bool is_char_like_v =
    std::is_same_v<T, char> || std::is_same_v<T, signed char> || std::is_same_v<T, unsigned char> ||
    std::is_same_v<T, wchar_t> || std::is_same_v<T, char16_t> || std::is_same_v<T, char32_t>;

template <typename T>
inline constexpr bool is_id_integer_v =
    std::is_integral_v<T> && !std::is_same_v<T, bool> && !is_char_like_v<T>;
}  // namespace detail

class WorkerId {
 public:
  template <typename T, std::enable_if_t<detail::is_id_integer_v<T>, int> = 0>
  constexpr explicit WorkerId(T value) : value_(static_cast<std::int64_t>(value)) {}
  // Everything else (bool, floating point, characters, pointers, strings) is refused outright.
  template <typename T, std::enable_if_t<!detail::is_id_integer_v<T>, int> = 0>
  WorkerId(T) = delete;

  constexpr std::int64_t value() const { return value_; }
  friend constexpr bool operator==(WorkerId a, WorkerId b) { return a.value_ == b.value_; }
  friend constexpr bool operator!=(WorkerId a, WorkerId b) { return a.value_ != b.value_; }
  friend constexpr bool operator<(WorkerId a, WorkerId b) { return a.value_ < b.value_; }

 private:
  std::int64_t value_;
};

// What a caller passed where a worker id belongs, before validation: an integer the id type holds,
// an integer it cannot hold (out of range), or something that is not an integer at all.
//
// An out-of-range integer is still an integer, as in the runtime's own front end: a negative one is
// `worker_negative`, a positive one (2^63 and beyond) names no worker (`worker_not_registered`). It is
// never wrapped into an in-range value. Untyped front ends pass it with its decimal text.
class WorkerArg {
 public:
  WorkerArg(WorkerId id) : kind_(Kind::kInRange), value_(id.value()) {}  // NOLINT: typed callers pass ids
  // `shown` is how the caller's value reads in its own language (`true`, `1.0`, `"1"`, `null`).
  static WorkerArg not_integer(std::string shown) {
    return WorkerArg(Kind::kNotInteger, std::move(shown), false);
  }
  // `decimal` is the integer's text, e.g. "9223372036854775808"; `negative` its sign.
  static WorkerArg out_of_range(std::string decimal, bool negative) {
    return WorkerArg(Kind::kOutOfRange, std::move(decimal), negative);
  }

  // True for every integer, in range or not.
  bool is_integer() const { return kind_ != Kind::kNotInteger; }
  // True when value() holds the integer.
  bool in_range() const { return kind_ == Kind::kInRange; }
  bool is_negative() const { return kind_ == Kind::kInRange ? value_ < 0 : negative_; }
  // The integer; meaningful only when in_range().
  std::int64_t value() const { return value_; }
  // How the value was written: its decimal text for integers.
  std::string text() const { return kind_ == Kind::kInRange ? std::to_string(value_) : shown_; }
  const std::string& shown() const { return shown_; }
  // True when both are integers and the same integer.
  bool same_integer(const WorkerArg& other) const {
    if (!is_integer() || kind_ != other.kind_) return false;
    return kind_ == Kind::kInRange ? value_ == other.value_ : shown_ == other.shown_;
  }

 private:
  enum class Kind : std::uint8_t { kInRange, kOutOfRange, kNotInteger };
  WorkerArg(Kind kind, std::string shown, bool negative)
      : kind_(kind), value_(0), shown_(std::move(shown)), negative_(negative) {}
  Kind kind_;
  std::int64_t value_;
  std::string shown_;
  bool negative_ = false;
};

// Dense handles the core hands out. They index vectors; they are not user-facing names.
template <typename Tag>
class Handle {
 public:
  static constexpr std::uint32_t kInvalid = std::numeric_limits<std::uint32_t>::max();
  constexpr Handle() = default;
  constexpr explicit Handle(std::uint32_t index) : index_(index) {}
  template <typename T, std::enable_if_t<!std::is_same_v<T, std::uint32_t>, int> = 0>
  Handle(T) = delete;

  constexpr std::uint32_t index() const { return index_; }
  constexpr bool valid() const { return index_ != kInvalid; }
  friend constexpr bool operator==(Handle a, Handle b) { return a.index_ == b.index_; }
  friend constexpr bool operator!=(Handle a, Handle b) { return a.index_ != b.index_; }
  friend constexpr bool operator<(Handle a, Handle b) { return a.index_ < b.index_; }

 private:
  std::uint32_t index_ = kInvalid;
};

using TaskId = Handle<struct TaskTag>;
using BufferId = Handle<struct BufferTag>;
using CallableId = Handle<struct CallableTag>;
using RunId = Handle<struct RunTag>;

}  // namespace dirsched

template <>
struct std::hash<dirsched::WorkerId> {
  std::size_t operator()(dirsched::WorkerId id) const noexcept {
    return std::hash<std::int64_t>{}(id.value());
  }
};
