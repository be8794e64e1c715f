// What the single-process sweep (run.cc) and the MPI sweep (mpi.cc) share:
// checking the spec, the platforms and models every point reads, running one
// point into its results line, the locked results file, and the pool of
// worker threads with its exclusive CBC lane. Private to dse/.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/util/clock.h"
#include "hetplan/app/costs.h"
#include "hetplan/dse/dse.h"
#include "hetplan/platform/platform.h"

namespace hetplan::dse {


std::string ModelName(const std::string& path);
std::string VariantKey(int platform, const std::vector<std::string>& overrides);

// What every point reads (never writes) once the points start.
struct Shared {
  const DseSpec* spec = nullptr;
  std::vector<LoadedModel> models;
  std::map<std::string, Platform> variants;  // VariantKey → platform with the point's overrides
  // (model, VariantKey) → the point's cost sources and their notes.
  std::map<std::pair<int, std::string>, ResolvedCosts> costs;
  std::string host_cpu;  // where the host costs were measured
  // Under MPI: the host and rank that run the points (added to every line).
  std::string run_host;
  int run_rank = -1;
};

// Checks what can be checked without files and maps every solver to its
// canonical name (the results are keyed by it).
Status CheckSpec(DseSpec* spec);

// The base platforms as given (`bases`) and every override combination the
// points use (`sh->variants`); an override the platform rejects is named.
Status LoadVariants(const DseSpec& spec, const std::vector<DsePoint>& points, Shared* sh,
                    std::vector<Platform>* bases = nullptr);

// Loads every model and resolves its costs on every variant (host profiles
// through the cache), one model after the other, before any point runs.
Status LoadModelsAndCosts(const DseSpec& spec, Shared* sh, DseSummary* summary, const DseProgressFn& progress,
                          Clock::time_point t0);

bool InCbcLane(const DseSpec& spec, const DsePoint& pt);

// The point's results line. With `schedule` null the point's schedule file
// (--schedules) is written here; otherwise its text is returned there and the
// caller writes it (MPI workers send it to rank 0, which writes every file).
// Never throws.
nlohmann::json RunPoint(const Shared& sh, const DsePoint& pt, std::string* schedule = nullptr);

// The path of a point's schedule file under --schedules.
std::string SchedulePath(const DseSpec& spec, const std::string& key);

std::string Describe(const Shared& sh, const DsePoint& pt);
std::string KeyOf(const Shared& sh, const DsePoint& pt);

// The progress callback's last call, when there is one: the sweep is done.
void ReportDone(const DseProgressFn& progress, const DseSummary& summary, DseProgress* prog);

// Adds a finished line to the summary's outcome counts.
void CountOutcome(const nlohmann::json& line, const std::string& description, DseSummary* summary);

// The results file, locked for the whole sweep (flock on the file itself, so
// that a second sweep with the same --out is refused at once and a killed
// sweep leaves no stale lock), refused when it is not empty unless resuming;
// on resume its partial last line is dropped and its keys read.
class ResultsFile {
 public:
  static Result<ResultsFile> Open(const std::string& path, bool resume);
  ResultsFile(ResultsFile&& other) noexcept;
  ResultsFile& operator=(ResultsFile&&) = delete;
  ResultsFile(const ResultsFile&) = delete;
  ~ResultsFile();

  // Keys of the points already in the file (status other than "error").
  const std::set<std::string>& done_keys() const { return done_keys_; }
  // Appends one line (a newline is added) in one write and flushes it.
  Status Append(const std::string& line);
  // After an error before any point ran: removes the file when this sweep
  // created it (and it is still empty), so that a failed start leaves nothing.
  void DiscardIfCreated();
  // Why the file is not locked (a file system without flock), or empty.
  const std::string& lock_note() const { return lock_note_; }

 private:
  ResultsFile() = default;
  std::string path_;
  int fd_ = -1;
  bool created_ = false;
  std::set<std::string> done_keys_;
  std::string lock_note_;
};

// A rough prior of a point's solve time (seconds), for handing out the
// largest points first: points differ by orders of magnitude, and a large one
// started last would leave every other worker idle at the end. From the
// solver family and the model size only; time-limited methods are capped at
// their limit.
double EstimatedSeconds(const DseSpec& spec, const DsePoint& pt, int operators);

// Worker threads that run points, one CBC-backed point at a time (the
// exclusive lane, dse.h). Points are submitted with Submit; `run` computes a
// point, `done` receives its line — both called on the pool's threads,
// `done` concurrently from several threads (the caller serialises).
class PointPool {
 public:
  using RunFn = std::function<nlohmann::json(int index, std::string* schedule)>;
  using DoneFn = std::function<void(int index, bool exclusive, nlohmann::json line, std::string schedule,
                                    double seconds)>;
  // `want_schedule`: pass a schedule string to `run` (see RunPoint).
  PointPool(int threads, RunFn run, DoneFn done, bool want_schedule = false);
  PointPool(const PointPool&) = delete;
  PointPool& operator=(const PointPool&) = delete;
  // Joins, unless Abandon was called.
  ~PointPool();

  void Submit(int index, bool exclusive);
  // No more points: the threads end once the queues are empty.
  void Close();
  // Take no further point: the threads end after their current one.
  void Stop();
  void Join();
  // The process ends with points still running (a hung solver): the threads
  // are detached, never joined.
  void Abandon();

  struct Running {
    int index;
    double seconds;
  };
  std::vector<Running> RunningNow() const;
  int threads() const { return static_cast<int>(threads_.size()); }

 private:
  void Work();

  RunFn run_;
  DoneFn done_;
  bool want_schedule_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<int> exclusive_, others_;
  std::map<int, Clock::time_point> running_;
  bool lane_busy_ = false;
  bool closed_ = false;
  bool stopped_ = false;
  bool abandoned_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace hetplan::dse
