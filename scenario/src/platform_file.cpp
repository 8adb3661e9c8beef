#include "dirsched/platform_file.hpp"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace dirsched {

namespace {

// The value of attribute `name` in a tag's text, or "" when it has none.
std::string attribute(const std::string& tag, const std::string& name) {
  for (std::size_t at = tag.find(name); at != std::string::npos; at = tag.find(name, at + 1)) {
    if (at == 0 || !std::isspace(static_cast<unsigned char>(tag[at - 1]))) continue;
    std::size_t i = at + name.size();
    while (i < tag.size() && std::isspace(static_cast<unsigned char>(tag[i]))) ++i;
    if (i >= tag.size() || tag[i] != '=') continue;
    ++i;
    while (i < tag.size() && std::isspace(static_cast<unsigned char>(tag[i]))) ++i;
    if (i >= tag.size() || (tag[i] != '"' && tag[i] != '\'')) continue;
    const auto end = tag.find(tag[i], i + 1);
    if (end == std::string::npos) return "";
    return tag.substr(i + 1, end - i - 1);
  }
  return "";
}

// "0-99,200" -> 101; saturates at cap + 1. An item that is not a number or a range counts one (SimGrid
// refuses it itself).
std::size_t radical_count(const std::string& radical, std::size_t cap) {
  std::size_t n = 0;
  std::stringstream items(radical);
  std::string item;
  while (std::getline(items, item, ',')) {
    const auto dash = item.find('-');
    std::size_t add = 1;
    if (dash != std::string::npos) {
      char* e1 = nullptr;
      char* e2 = nullptr;
      const std::string a = item.substr(0, dash), b = item.substr(dash + 1);
      const unsigned long long lo = std::strtoull(a.c_str(), &e1, 10), hi = std::strtoull(b.c_str(), &e2, 10);
      if (!a.empty() && !b.empty() && *e1 == '\0' && *e2 == '\0' && hi >= lo)
        add = hi - lo >= cap ? cap + 1 : static_cast<std::size_t>(hi - lo + 1);
    }
    n += add;
    if (n > cap) return cap + 1;
  }
  return n;
}

}  // namespace

std::size_t count_platform_hosts(const std::string& xml, std::size_t cap) {
  std::size_t n = 0;
  for (std::size_t i = xml.find('<'); i != std::string::npos && n <= cap; i = xml.find('<', i + 1)) {
    if (xml.compare(i, 4, "<!--") == 0) {
      const auto end = xml.find("-->", i + 4);
      if (end == std::string::npos) break;
      i = end;
      continue;
    }
    std::size_t j = i + 1;
    while (j < xml.size() && (std::isalnum(static_cast<unsigned char>(xml[j])) || xml[j] == '_')) ++j;
    const std::string name = xml.substr(i + 1, j - i - 1);
    if (name == "host" || name == "peer") {
      ++n;
    } else if (name == "cluster" || name == "cabinet") {
      const auto end = xml.find('>', j);
      const std::string tag = xml.substr(j, end == std::string::npos ? std::string::npos : end - j);
      n += radical_count(attribute(tag, "radical"), cap);
    }
  }
  return n > cap ? cap + 1 : n;
}

std::optional<std::string> platform_file_problem(const std::string& path) {
  const std::string ext = ".xml";
  if (path.size() < ext.size() || path.compare(path.size() - ext.size(), ext.size(), ext) != 0)
    return path + ": a platform file is SimGrid XML, named *.xml (SimGrid would load another kind, a *.so, as code)";
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "platform file not found: " + path;
  if (!S_ISREG(st.st_mode)) return path + ": not a regular file (a FIFO, a device, a socket or a folder)";
  if (static_cast<std::size_t>(st.st_size) > kMaxPlatformBytes)
    return path + ": " + std::to_string(st.st_size) + " bytes, more than the " + std::to_string(kMaxPlatformBytes >> 20) +
           " MiB a platform file may have";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot read " + path + ": " + std::strerror(errno);
  std::ostringstream text;
  text << in.rdbuf();
  const std::size_t hosts = count_platform_hosts(text.str());
  if (hosts > kMaxPlatformHosts)
    return path + ": declares more than " + std::to_string(kMaxPlatformHosts) +
           " hosts (each <host> and <peer> one, each <cluster> and <cabinet> its radical), the most a platform may have";
  return std::nullopt;
}

}  // namespace dirsched
