// The record's decoders' common reader (private to record/): typed getters on a parsed JSON value that
// throw RecordError "WHERE: JSON.PATH: expected ..." (WHERE: the file, or the file and line).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dirsched/record/summary.hpp"
#include "dirsched/time_limit.hpp"

namespace dirsched::record {

template <typename J>
class Reader {
 public:
  explicit Reader(const std::string& where) : file_(where) {}

  [[noreturn]] void fail(const std::string& path, std::string_view want) const {
    throw RecordError(file_ + ": " + (path.empty() ? "(top level)" : path) + ": expected " + std::string(want));
  }
  // The field `key` of `obj` when present (null counts as present).
  static const J* field(const J& obj, const char* key) {
    const auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  static std::string at(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }
  static std::string at(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

  const J& object(const J& v, const std::string& path) const {
    if (!v.is_object()) fail(path, "an object");
    return v;
  }
  const J& array(const J& v, const std::string& path) const {
    if (!v.is_array()) fail(path, "an array");
    return v;
  }
  std::string text(const J& v, const std::string& path) const {
    if (!v.is_string()) fail(path, "a string");
    return v.template get<std::string>();
  }
  double number(const J& v, const std::string& path) const {
    if (!v.is_number()) fail(path, "a number");
    return v.template get<double>();
  }
  // A time in seconds a run can hold: from 0 to the testbed's limit, 2^32 s (time_limit.hpp).
  double time(const J& v, const std::string& path) const {
    const double t = number(v, path);
    if (!(t >= 0 && t <= kMaxTimeS)) fail(path, "a time from 0 to 2^32 s");
    return t;
  }
  std::uint64_t count(const J& v, const std::string& path) const {
    if (v.is_number_unsigned()) return v.template get<std::uint64_t>();
    if (v.is_number_integer() && v.template get<std::int64_t>() >= 0) return static_cast<std::uint64_t>(v.template get<std::int64_t>());
    fail(path, "an integer >= 0");
  }
  std::int64_t integer(const J& v, const std::string& path) const {
    if (v.is_number_integer() && (!v.is_number_unsigned() || v.template get<std::uint64_t>() <= INT64_MAX))
      return v.template get<std::int64_t>();
    fail(path, "an integer");
  }
  bool boolean(const J& v, const std::string& path) const {
    if (!v.is_boolean()) fail(path, "true or false");
    return v.template get<bool>();
  }
  std::optional<std::string> text_or_null(const J& v, const std::string& path) const {
    if (v.is_null()) return std::nullopt;
    if (!v.is_string()) fail(path, "a string or null");
    return v.template get<std::string>();
  }
  std::optional<double> number_or_null(const J& v, const std::string& path) const {
    if (v.is_null()) return std::nullopt;
    if (!v.is_number()) fail(path, "a number or null");
    return v.template get<double>();
  }
  template <typename T, typename F>
  std::vector<T> list(const J& v, const std::string& path, F each) const {
    std::vector<T> out;
    array(v, path);
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(each(v[i], at(path, i)));
    return out;
  }
  std::vector<std::string> texts(const J& v, const std::string& path) const {
    return list<std::string>(v, path, [&](const J& x, const std::string& p) { return text(x, p); });
  }
  std::vector<std::uint64_t> counts(const J& v, const std::string& path) const {
    return list<std::uint64_t>(v, path, [&](const J& x, const std::string& p) { return count(x, p); });
  }
  // The fields of an object by name, in the written order, each through `each`.
  template <typename T, typename F>
  std::vector<std::pair<std::string, T>> named(const J& v, const std::string& path, F each) const {
    std::vector<std::pair<std::string, T>> out;
    object(v, path);
    for (auto it = v.begin(); it != v.end(); ++it) out.emplace_back(it.key(), each(it.value(), at(path, it.key().c_str())));
    return out;
  }

 private:
  const std::string& file_;
};

}  // namespace dirsched::record
