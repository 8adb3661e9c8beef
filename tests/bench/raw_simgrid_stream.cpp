// The baseline for the simulator's speed: the stream workload as bare SimGrid message passing.
//
// One master actor and one actor per worker, no scheduler core: the master sends task i to worker
// i mod W (one mailbox message per dispatch), the worker sleeps the task's duration and sends a
// completion back (one message per completion); the master keeps one task in flight per worker.
// Usage: raw_simgrid_stream TASKS WORKERS DURATION_S. Prints "tasks N wall_s T tasks_per_s R".
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s TASKS WORKERS DURATION_S\n", argv[0]);
    return 2;
  }
  const long tasks = std::atol(argv[1]);
  const int workers = std::atoi(argv[2]);
  const double duration = std::atof(argv[3]);
  int sg_argc = 2;
  char arg0[] = "raw", arg1[] = "--log=root.thres:critical";
  char* sg_argv[] = {arg0, arg1, nullptr};
  sg4::Engine e(&sg_argc, sg_argv);
  sg4::NetZone* zone = sg4::create_full_zone("raw");
  sg4::Host* master_host = zone->create_host("host0", 1e11)->seal();
  std::vector<sg4::Host*> hosts;
  for (int w = 0; w < workers; ++w) {
    sg4::Host* h = zone->create_host("chip" + std::to_string(w), 1e14)->seal();
    const sg4::Link* l = zone->create_link("pcie" + std::to_string(w), 16e9)->set_latency(1e-6)->seal();
    zone->add_route(master_host->get_netpoint(), h->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(l)},
                    true);
    hosts.push_back(h);
  }
  zone->seal();
  static long task_ids_end = -1;  // the sentinel that stops a worker
  std::vector<long> ids(static_cast<std::size_t>(tasks));
  for (long i = 0; i < tasks; ++i) ids[static_cast<std::size_t>(i)] = i;
  sg4::Mailbox* back = sg4::Mailbox::by_name("master");
  for (int w = 0; w < workers; ++w) {
    sg4::Actor::create("worker" + std::to_string(w), hosts[static_cast<std::size_t>(w)],
                       [w, duration, back]() {
                         sg4::Mailbox* in = sg4::Mailbox::by_name("w" + std::to_string(w));
                         while (true) {
                           long* task = in->get<long>();
                           if (task == &task_ids_end) return;
                           sg4::this_actor::sleep_for(duration);
                           back->put(task, 0);
                         }
                       });
  }
  long done = 0;
  sg4::Actor::create("master", master_host, [&]() {
    std::vector<long> next(static_cast<std::size_t>(workers));
    for (int w = 0; w < workers; ++w) next[static_cast<std::size_t>(w)] = w;
    auto send = [&](int w) {
      long& n = next[static_cast<std::size_t>(w)];
      sg4::Mailbox* mb = sg4::Mailbox::by_name("w" + std::to_string(w));
      if (n < tasks) {
        mb->put_init(&ids[static_cast<std::size_t>(n)], 0)->detach();
        n += workers;
      } else {
        mb->put_init(&task_ids_end, 0)->detach();
      }
    };
    for (int w = 0; w < workers; ++w) send(w);
    while (done < tasks) {
      long* t = back->get<long>();
      ++done;
      send(static_cast<int>(*t % workers));
    }
  });
  const auto start = std::chrono::steady_clock::now();
  e.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("tasks %ld wall_s %.6f tasks_per_s %.1f simulated_s %.6f\n", done, wall,
              static_cast<double>(done) / wall, sg4::Engine::get_clock());
  return 0;
}
