#include "dirsched/platform.hpp"

#include <map>
#include <simgrid/s4u.hpp>

namespace sg4 = simgrid::s4u;

namespace dirsched {

void build_default_platform(const Scenario& s) {
  // A star: each host's own link to the centre. A full zone would keep an N x N route table (134 MB
  // and most of the start-up time at 4096 workers); a star keeps one route per host.
  sg4::NetZone* zone = sg4::create_star_zone("default");
  std::size_t sub_on_scheduler = 0;
  for (const std::string& h : s.sub_hosts) sub_on_scheduler += h == s.scheduler_host;
  sg4::Host* scheduler = zone->create_host(s.scheduler_host, 1e11);
  scheduler->set_core_count(static_cast<int>(std::max<std::size_t>(1, sub_on_scheduler)));
  scheduler->seal();
  // Host name -> kind of the first worker on it; std::map keeps creation order stable.
  std::map<std::string, int> hosts;  // 0 chip, 1 local worker, 2 remote, 3 SUB
  for (const WorkerSpec& w : s.next_level)
    if (w.host != s.scheduler_host) hosts.emplace(w.host, static_cast<int>(w.kind));
  for (const std::string& h : s.sub_hosts)
    if (h != s.scheduler_host) hosts.emplace(h, 3);
  const sg4::Link* loop = zone->create_link("loopback_" + s.scheduler_host, 1e11)->set_latency(0)->seal();
  zone->add_route(scheduler->get_netpoint(), scheduler->get_netpoint(), nullptr, nullptr,
                  {sg4::LinkInRoute(loop)}, false);
  // The scheduler host's side of the star costs nothing: each route's cost is the worker's link.
  const sg4::Link* hub = zone->create_link("hub_" + s.scheduler_host, 1e13)->set_latency(0)->seal();
  zone->add_route(scheduler->get_netpoint(), nullptr, nullptr, nullptr, {sg4::LinkInRoute(hub)}, true);
  for (const auto& [name, kind] : hosts) {
    const double speed = kind == 0 ? 1e14 : kind == 2 ? 1e13 : 1e11;
    sg4::Host* h = zone->create_host(name, speed);
    h->seal();
    const bool remote = kind == 2;
    sg4::Link* link = zone->create_link((remote ? "net_" : "pcie_") + name, remote ? 12.5e9 : 16e9);
    link->set_latency(remote ? 5e-6 : 1e-6);
    link->seal();
    zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, {sg4::LinkInRoute(link)}, true);
  }
  zone->seal();
}

}  // namespace dirsched
