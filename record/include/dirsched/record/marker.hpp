// The markers that make a folder dirsched's (docs/outputs.md, "The output-folder rules"), typed, with
// their only JSON codec. A marker is read strictly (the caller reads the file with the loader's strict
// JSON reader and hands the document here) and written whole, by one atomic rename.
//
// .dirsched-run     {"dirsched":"run","scenario":...,"dirsched_version":...,"engine":...,
//                    "time_scale":...,"files":[...]}  (fields in that order; `files` sorted)
// .dirsched-sweep   {"dirsched":"sweep","file":...,"scenario":...,"variant_count":N,"variants":[...]}
//                    (keys sorted, as the Python front end once wrote them)
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dirsched/record/summary.hpp"  // RecordError

namespace dirsched::record {

// A run folder's marker. Lenient about what only describes the run (an older marker may lack the
// scenario, the version or the engine facts), strict about `files`, which decides what a replace may
// delete.
struct RunMarker {
  std::string scenario, dirsched_version;
  std::string engine = "sim";  // as summary.json spells it: sim, event, threads, strace
  double time_scale = 1;       // threads: wall seconds per scenario second
  // Every file the folder holds but the marker itself; none: a marker from before the list, whose
  // folder's names are trusted as the names a run writes.
  std::optional<std::vector<std::string>> files;
};
std::string encode(const RunMarker& m);  // one line with its LF; `files` sorted, each name once
// RecordError "PATH: what" for a document that is not a run marker.
RunMarker decode_run_marker(const nlohmann::json& j, const std::string& path);

// A sweep folder's marker: the scenario it belongs to (its name, and its file: the Python front end
// writes "python:FUNCTION"), and the variants it holds, in order, each once.
struct SweepMarker {
  std::string scenario, file;
  std::vector<std::size_t> variants;
};
std::string encode(const SweepMarker& m);  // one line with its LF
SweepMarker decode_sweep_marker(const nlohmann::json& j, const std::string& path);

}  // namespace dirsched::record
