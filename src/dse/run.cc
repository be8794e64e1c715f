// RunDse: load and profile everything first (sequentially), then run the
// points on a worker pool with one exclusive lane for CBC-backed solvers, and
// append one JSON line per finished point.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "dse/internal.h"
#include "hetplan/dse/dse.h"

namespace hetplan {


namespace {

// The time left of a sweep: the mean seconds per (model, CBC lane) group of
// the points finished so far, over the points not finished yet, with the
// CBC lane beside the other workers.
class EtaEstimate {
 public:
  EtaEstimate(const DseSpec& spec, const std::vector<DsePoint>& points, const std::vector<int>& todo, int jobs)
      : spec_(spec), points_(points), pending_(todo.begin(), todo.end()), jobs_(jobs) {}

  void Finished(int i, bool lane, double seconds) {
    auto& t = timing_[{points_[i].model, lane}];
    t.first += seconds;
    ++t.second;
    pending_.erase(i);
  }

  // Seconds left, or -1 before any point finished.
  double Seconds() const {
    double excl = 0, other = 0, all_sum = 0;
    int all_n = 0;
    bool any_excl = false;
    for (const auto& [k, v] : timing_) {
      all_sum += v.first;
      all_n += v.second;
    }
    if (all_n == 0) return -1;
    for (int i : pending_) {
      const bool lane = dse::InCbcLane(spec_, points_[i]);
      const auto it = timing_.find({points_[i].model, lane});
      const double e = it != timing_.end() ? it->second.first / it->second.second : all_sum / all_n;
      (lane ? excl : other) += e;
      any_excl = any_excl || lane;
    }
    return std::max(excl, other / std::max(1, jobs_ - (any_excl ? 1 : 0)));
  }

 private:
  const DseSpec& spec_;
  const std::vector<DsePoint>& points_;
  std::map<std::pair<int, bool>, std::pair<double, int>> timing_;
  std::set<int> pending_;
  const int jobs_;
};

}  // namespace

Result<DseSummary> RunDse(const DseSpec& spec_in, const DseProgressFn& progress) {
  DseSpec spec = spec_in;  // with every solver by its canonical name
  const auto t0 = Clock::now();
  HETPLAN_RETURN_IF_ERROR(dse::CheckSpec(&spec));

  dse::Shared sh;
  sh.spec = &spec;
  sh.host_cpu = CpuModelName();
  DseSummary summary;
  summary.host_cpu = sh.host_cpu;
  const std::vector<DsePoint> points = ExpandPoints(spec);
  summary.points = static_cast<int>(points.size());

  // Platforms and every override combination, checked before anything runs;
  // then the results file, locked for the whole sweep.
  HETPLAN_RETURN_IF_ERROR(dse::LoadVariants(spec, points, &sh));
  HETPLAN_ASSIGN_OR_RETURN(dse::ResultsFile out, dse::ResultsFile::Open(spec.out_path, spec.resume));
  if (!out.lock_note().empty()) summary.notes.push_back(out.lock_note());

  // Models, then host profiles: sequentially, before any point runs.
  if (Status st = dse::LoadModelsAndCosts(spec, &sh, &summary, progress, t0); !st.ok()) {
    out.DiscardIfCreated();
    return st;
  }
  summary.profile_s = SecondsSince(t0);
  if (!spec.schedules_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(spec.schedules_dir, ec);
    if (ec) {
      out.DiscardIfCreated();
      return Error(ErrorCode::kIoError, "{}: cannot create the folder: {}", spec.schedules_dir, ec.message());
    }
  }

  // The work: CBC points in one lane, the rest on any worker.
  std::vector<int> todo;
  for (int i = 0; i < static_cast<int>(points.size()); ++i) {
    if (out.done_keys().contains(dse::KeyOf(sh, points[i]))) {
      ++summary.resumed;
    } else {
      todo.push_back(i);
    }
  }
  const int to_run = static_cast<int>(todo.size());
  int jobs = spec.jobs > 0 ? spec.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  jobs = std::max(1, std::min(jobs, to_run));
  summary.jobs = jobs;

  std::mutex mu;
  Status io_error;
  const auto ts = Clock::now();
  EtaEstimate eta(spec, points, todo, jobs);
  DseProgress prog;
  prog.phase = DseProgress::Phase::kSolving;
  prog.total = to_run;
  prog.resumed = summary.resumed;
  if (progress) {
    prog.elapsed_s = SecondsSince(t0);
    progress(prog);
  }

  const auto interrupt_set = [&] { return spec.solve.interrupt != nullptr && spec.solve.interrupt->load(); };
  {
    dse::PointPool* pool_ptr = nullptr;
    dse::PointPool pool(
        to_run > 0 ? jobs : 0,
        [&](int i, std::string*) {
          // Stopped on request: no new point starts (the rest stay for --resume).
          if (interrupt_set()) return nlohmann::json{{"termination", "interrupted"}};
          return dse::RunPoint(sh, points[i]);
        },
        [&](int i, bool excl, nlohmann::json line, std::string, double seconds) {
          std::lock_guard<std::mutex> lock(mu);
          if (!io_error.ok()) return;
          if (line.value("termination", "") == "interrupted") {
            // Not started, or cut short on request: not written, so that
            // --resume runs it again.
            summary.interrupted = true;
            pool_ptr->Stop();
            return;
          }
          const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
          if (Status st = out.Append(text); !st.ok()) {
            io_error = st;
            pool_ptr->Stop();
            return;
          }
          eta.Finished(i, excl, seconds);
          const std::string what = dse::Describe(sh, points[i]);
          dse::CountOutcome(line, what, &summary);
          if (progress) {
            prog.done = summary.ran;
            prog.elapsed_s = SecondsSince(t0);
            prog.eta_s = eta.Seconds();
            prog.message = fmt::format("{}: {}", what, line.value("status", ""));
            progress(prog);
          }
        });
    pool_ptr = &pool;
    for (int i : todo) pool.Submit(i, dse::InCbcLane(spec, points[i]));
    pool.Close();
    pool.Join();
  }
  if (!io_error.ok()) return io_error;
  summary.solve_s = SecondsSince(ts);
  summary.wall_s = SecondsSince(t0);
  dse::ReportDone(progress, summary, &prog);
  return summary;
}

}  // namespace hetplan
