// The folder markers' codec (marker.hpp).
#include "dirsched/record/marker.hpp"

#include <algorithm>
#include <set>

namespace dirsched::record {

using nlohmann::json;

std::string encode(const RunMarker& m) {
  nlohmann::ordered_json out{{"dirsched", "run"},
                             {"scenario", m.scenario},
                             {"dirsched_version", m.dirsched_version},
                             {"engine", m.engine},
                             {"time_scale", m.time_scale}};
  if (m.files) {
    std::vector<std::string> files = *m.files;
    std::sort(files.begin(), files.end());
    files.erase(std::unique(files.begin(), files.end()), files.end());
    out["files"] = files;
  }
  return out.dump() + "\n";
}

RunMarker decode_run_marker(const json& j, const std::string& path) {
  auto bad = [&](const std::string& what) { return RecordError(path + ": " + what); };
  if (!j.is_object() || j.value("dirsched", json()) != "run") throw bad("expected {\"dirsched\": \"run\", ...}");
  RunMarker m;
  auto text = [&](const char* key, std::string& to) {
    if (j.contains(key) && j[key].is_string()) to = j[key].get<std::string>();
  };
  text("scenario", m.scenario);
  text("dirsched_version", m.dirsched_version);
  text("engine", m.engine);
  if (m.engine.empty()) m.engine = "sim";
  if (j.contains("time_scale") && j["time_scale"].is_number()) m.time_scale = j["time_scale"].get<double>();
  if (j.contains("files")) {
    if (!j["files"].is_array()) throw bad("files: expected an array of file names");
    m.files.emplace();
    for (std::size_t i = 0; i < j["files"].size(); ++i) {
      if (!j["files"][i].is_string()) throw bad("files[" + std::to_string(i) + "]: expected a file name");
      m.files->push_back(j["files"][i].get<std::string>());
    }
  }
  return m;
}

std::string encode(const SweepMarker& m) {
  const json j = {{"dirsched", "sweep"},
                  {"file", m.file},
                  {"scenario", m.scenario},
                  {"variant_count", m.variants.size()},
                  {"variants", m.variants}};
  return j.dump() + "\n";  // nlohmann's object keeps its keys sorted
}

SweepMarker decode_sweep_marker(const json& j, const std::string& path) {
  auto bad = [&](const std::string& what) { return RecordError(path + ": " + what); };
  if (!j.is_object() || j.value("dirsched", json()) != "sweep") throw bad("not a sweep marker (\"dirsched\": \"sweep\")");
  if (!j.contains("scenario") || !j["scenario"].is_string()) throw bad("scenario: expected a string");
  if (!j.contains("file") || !j["file"].is_string()) throw bad("file: expected a string");
  if (!j.contains("variants") || !j["variants"].is_array()) throw bad("variants: expected an array");
  SweepMarker m;
  m.scenario = j["scenario"].get<std::string>();
  m.file = j["file"].get<std::string>();
  std::set<std::size_t> seen;
  for (std::size_t i = 0; i < j["variants"].size(); ++i) {
    const json& v = j["variants"][i];
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<long long>() >= 0))
      throw bad("variants[" + std::to_string(i) + "]: expected a variant index");
    if (!seen.insert(v.get<std::size_t>()).second)
      throw bad("variants[" + std::to_string(i) + "]: variant " + v.dump() + " listed twice");
    m.variants.push_back(v.get<std::size_t>());
  }
  return m;
}

}  // namespace dirsched::record
