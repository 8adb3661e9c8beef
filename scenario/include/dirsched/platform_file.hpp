// What the loader checks of a SimGrid platform file before SimGrid reads it (SimGrid pays for every host
// a file declares before anything can stop it, and ends the process on what it cannot parse):
// - a regular file (not a FIFO or a device) named *.xml: SimGrid would load a *.so platform as code;
// - at most kMaxPlatformBytes, read whole here;
// - at most kMaxPlatformHosts hosts: each <host> and <peer> is one, each <cluster> and <cabinet> as many
//   as its `radical` lists ("0-99,200" is 101). Comments are skipped. A file this count gets wrong
//   (a radical SimGrid would refuse) is left to SimGrid's own check, in the probe child.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace dirsched {

inline constexpr std::size_t kMaxPlatformBytes = 64u << 20;  // 64 MiB
inline constexpr std::size_t kMaxPlatformHosts = 262144;     // 2^18: four hosts for each of 65,536 workers

// The hosts a platform file's text declares, counted as above, stopping past `cap`.
std::size_t count_platform_hosts(const std::string& xml, std::size_t cap = kMaxPlatformHosts);
// Why `path` is refused as a platform file, or nothing when it passes the checks above.
std::optional<std::string> platform_file_problem(const std::string& path);

}  // namespace dirsched
