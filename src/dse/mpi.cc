// `hetplan dse` under MPI (dse/mpi.h): rank 0's coordinator and the workers'
// loop. Without MPI (HETPLAN_HAVE_MPI 0) only the one-rank path is compiled;
// the launch detection is in mpi_launch.cc, compiled in every build.
#include "hetplan/dse/mpi.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>

#include "dse/internal.h"
#include "dse/ledger.h"
#include "dse/mpi_internal.h"
#include "dse/protocol.h"
#include "hetplan/cost/cost_table.h"
#include "hetplan/solve/solver.h"
#include "hetplan/util/io.h"

#if HETPLAN_HAVE_MPI
// The C API only: the deprecated C++ bindings do not compile warning-free.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include "hetplan_build_id.h"
#endif

namespace hetplan {

bool BuiltWithMpi() { return HETPLAN_HAVE_MPI != 0; }

#if !HETPLAN_HAVE_MPI

Result<std::unique_ptr<DseMpiJob>> DseMpiJob::Init(const MpiLaunch& launch) {
  if (launch.size > 1 || launch.launcher == "Slurm without PMI") {
    return Error(ErrorCode::kUnsupported,
                 "dse: {} started {} ranks, but this hetplan was built without MPI: install libopenmpi-dev "
                 "(scripts/setup.sh) and rebuild, or run one process",
                 launch.launcher, launch.size);
  }
  return std::unique_ptr<DseMpiJob>(new DseMpiJob());
}

DseMpiJob::~DseMpiJob() = default;

Result<DseSummary> DseMpiJob::Run(const DseSpec& spec, const DseMpiOptions&, const DseProgressFn& progress) {
  return RunDse(spec, progress);
}

int DseMpiJob::Finish(int exit_code) {
  finished_ = true;
  return exit_code;
}

#else  // HETPLAN_HAVE_MPI

namespace {

using dse::Backoff;
using dse::Ints;
using dse::LineText;
using dse::Outbox;
using dse::ParseResultFrame;
using dse::RankThreads;
using dse::ResultFrame;

// Point-to-point tags. The start-up go/abort and the cost tables travel by
// MPI_Ibcast instead (a tree, not rank 0 sending N copies).
enum Tag : int {
  kHello = 1,      // worker → 0: version, arguments, its view of the files (JSON)
  kReady = 2,      // worker → 0: models loaded and checked against rank 0's (JSON)
  kAssign = 3,     // 0 → worker: point indices (int[])
  kResult = 4,     // worker → 0: "index\nline\nschedule"
  kHeartbeat = 5,  // worker → 0: the points its threads run, for how long (JSON)
  kStop = 6,       // 0 → worker: int {0: finish, 1: the job is being aborted}
  kBye = 7,        // worker → 0: done (JSON)
  kPing = 8,       // 0 → worker: rank 0 is alive (empty)
};
constexpr int kProtocol = 1;

std::string BuildId() { return fmt::format("hetplan {} (protocol {})", HETPLAN_BUILD_ID, kProtocol); }

// ---------------------------------------------------------------------------
// Messages: polling, never a blocking wait (a blocking MPI call spins a core).

class Comm {
 public:
  explicit Comm(DseSummary* counters) : counters_(counters) {}
  ~Comm() { Drain(1.0); }

  void Send(int dest, int tag, std::string bytes) {
    auto p = std::make_unique<Pending>();
    p->bytes = std::move(bytes);
    MPI_Isend(p->bytes.data(), static_cast<int>(p->bytes.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD, &p->req);
    pending_.push_back(std::move(p));
    if (counters_ != nullptr) ++counters_->messages_out;
  }
  void SendInts(int dest, int tag, const std::vector<int>& v) {
    std::string bytes(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int));
    Send(dest, tag, std::move(bytes));
  }
  // Frees the buffers of sends that completed.
  void Progress() {
    std::erase_if(pending_, [](std::unique_ptr<Pending>& p) {
      int done = 0;
      MPI_Test(&p->req, &done, MPI_STATUS_IGNORE);
      return done != 0;
    });
  }
  // Waits (polling) up to `seconds` for every send to complete.
  bool Drain(double seconds) {
    const auto t0 = Clock::now();
    while (!pending_.empty() && SecondsSince(t0) < seconds) {
      Progress();
      if (!pending_.empty()) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return pending_.empty();
  }
  // Abandons sends that will never complete (their peer is gone).
  void Forget() {
    for (auto& p : pending_) (void)p.release();  // MPI may still read the buffers: never freed
    pending_.clear();
  }

  struct Message {
    int source = -1, tag = -1;
    std::string bytes;
  };
  // One message from `source` (MPI_ANY_SOURCE), or nothing.
  bool Poll(int source, Message* m) {
    int flag = 0;
    MPI_Message msg;
    MPI_Status st;
    MPI_Improbe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
    if (!flag) return false;
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    m->source = st.MPI_SOURCE;
    m->tag = st.MPI_TAG;
    m->bytes.assign(static_cast<size_t>(count), '\0');
    MPI_Mrecv(m->bytes.data(), count, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    if (counters_ != nullptr) ++counters_->messages_in;
    return true;
  }

 private:
  struct Pending {
    std::string bytes;
    MPI_Request req = MPI_REQUEST_NULL;
  };
  DseSummary* counters_;
  std::vector<std::unique_ptr<Pending>> pending_;
};

// A broadcast from rank 0, waited for by polling. On rank 0 `bytes` is sent;
// elsewhere it is filled. Two steps: the size, then the bytes.
void Broadcast(std::string* bytes, int rank) {
  long long size = static_cast<long long>(bytes->size());
  auto wait = [](MPI_Request* req) {
    int done = 0;
    auto sleep = std::chrono::microseconds(100);
    while (true) {
      MPI_Test(req, &done, MPI_STATUS_IGNORE);
      if (done) return;
      std::this_thread::sleep_for(sleep);
      sleep = std::min(sleep * 2, std::chrono::microseconds(20000));
    }
  };
  MPI_Request req;
  MPI_Ibcast(&size, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD, &req);
  wait(&req);
  if (rank != 0) bytes->assign(static_cast<size_t>(size), '\0');
  // MPI counts are ints: send in pieces of at most 1 GiB.
  constexpr long long kPiece = 1LL << 30;
  for (long long off = 0; off < size; off += kPiece) {
    const int n = static_cast<int>(std::min(kPiece, size - off));
    MPI_Ibcast(bytes->data() + off, n, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
    wait(&req);
  }
}

std::atomic<int> g_signal{0};
void OnSignal(int sig) { g_signal.store(sig); }

// Polls until a message with `tag` arrives from every rank in `from` (other
// messages are dropped), or `timeout_s` passes; returns them by rank.
std::map<int, std::string> Collect(Comm& comm, int tag, int size, double timeout_s, std::set<int>* missing) {
  std::map<int, std::string> got;
  missing->clear();
  for (int r = 1; r < size; ++r) missing->insert(r);
  const auto t0 = Clock::now();
  Backoff backoff;
  while (!missing->empty() && SecondsSince(t0) < timeout_s) {
    Comm::Message m;
    if (comm.Poll(MPI_ANY_SOURCE, &m)) {
      backoff.Reset();
      if (m.tag == tag && missing->erase(m.source) > 0) got[m.source] = std::move(m.bytes);
      continue;
    }
    comm.Progress();
    std::this_thread::sleep_for(backoff.Next());
  }
  return got;
}

std::string PointList(const dse::Shared& sh, const std::vector<DsePoint>& points, const std::vector<int>& idx) {
  std::vector<std::string> names;
  for (int i : idx) names.push_back(dse::Describe(sh, points[i]));
  return names.empty() ? std::string("no point") : fmt::format("{}", fmt::join(names, "; "));
}

// ---------------------------------------------------------------------------
// Rank 0.

class Coordinator {
 public:
  Coordinator(const DseMpiOptions& options, const DseProgressFn& progress, int size, int threads)
      : options_(options), progress_(progress), size_(size), threads_(threads), comm_(&summary_) {}

  // Finish must end the job rather than finalize (a rank that cannot take
  // part); and whether it tells the live workers first.
  bool must_abort = false, stop_abort = false;

  Result<DseSummary> Run(const DseSpec& spec) {
    t0_ = Clock::now();
    summary_.ranks = size_;
    Prepare(spec, BuildId(), options_.arguments, 0, threads_, &s_);
    s_.sh.host_cpu = CpuModelName();
    summary_.host_cpu = s_.sh.host_cpu;
    summary_.points = static_cast<int>(s_.points.size());
    if (Status st = CheckIn(); !st.ok()) return st;
    if (Status st = SendCosts(); !st.ok()) {
      out_->DiscardIfCreated();
      return st;
    }
    summary_.profile_s = SecondsSince(t0_);  // up to every rank ready
    RunPoints();
    if (!io_error_.ok()) return io_error_;
    return summary_;
  }

 private:
  // 1. Every rank checks in (build, arguments, files) while rank 0 locks
  // the results file; the verdict goes to all by broadcast.
  Status CheckIn() {
    Status st = s_.status;
    if (st.ok()) {
      auto opened = dse::ResultsFile::Open(s_.spec.out_path, s_.spec.resume);
      if (opened.ok()) {
        out_.emplace(std::move(opened).value());
        if (!out_->lock_note().empty()) summary_.notes.push_back(out_->lock_note());
      } else {
        st = opened.status();
      }
    }
    std::set<int> missing;
    for (const auto& [r, bytes] : Collect(comm_, kHello, size_, options_.startup_timeout_s, &missing)) {
      peers_[r] = nlohmann::json::parse(bytes, nullptr, false);
    }
    if (!missing.empty()) {
      // A rank that never checked in cannot take part in MPI_Finalize.
      must_abort = stop_abort = true;
      if (st.ok()) {
        st = Error(ErrorCode::kInternal, "dse: rank {} did not check in within {:g} s of the start",
                   *missing.begin(), options_.startup_timeout_s);
      }
    }
    for (int r = 1; r < size_ && st.ok(); ++r) {
      st = peers_[r].is_discarded() ? Error(ErrorCode::kInternal, "dse: rank {} sent an unreadable hello (a bug)", r)
                                    : dse::CompareHello(s_.hello, peers_[r], r);
    }
    // "go" and rank 0's host: ranks on other machines load their models
    // while rank 0 profiles; those on its machine wait, so as not to disturb
    // the measurements.
    std::string go = st.ok() ? "go\n" + s_.sh.run_host : "";
    Broadcast(&go, 0);
    if (!st.ok()) {
      if (out_) out_->DiscardIfCreated();
      return st;
    }
    summary_.rank_hosts.push_back(fmt::format("rank 0: {} ({} thread{}, coordinating)", s_.sh.run_host, threads_,
                                              threads_ == 1 ? "" : "s"));
    for (int r = 1; r < size_; ++r) {
      const int t = peers_[r].value("threads", 1);
      summary_.rank_hosts.push_back(
          fmt::format("rank {}: {} ({} thread{})", r, peers_[r].value("host", "?"), t, t == 1 ? "" : "s"));
    }
    return Status::Ok();
  }

  // 2. Models and costs on rank 0 alone (the others wait, idle), the tables
  // to every rank, and every rank ready.
  Status SendCosts() {
    const DseSpec& spec = s_.spec;
    Status st = dse::LoadModelsAndCosts(spec, &s_.sh, &summary_, progress_, t0_);
    if (st.ok() && !spec.schedules_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(spec.schedules_dir, ec);
      if (ec) st = Error(ErrorCode::kIoError, "{}: cannot create the folder: {}", spec.schedules_dir, ec.message());
    }
    std::string payload = st.ok() ? dse::CostsPayload(s_.sh) : "";
    Broadcast(&payload, 0);
    if (!st.ok()) return st;
    std::set<int> missing;
    const std::map<int, std::string> readies =
        Collect(comm_, kReady, size_, options_.startup_timeout_s, &missing);
    if (!missing.empty()) {
      must_abort = stop_abort = true;
      st = Error(ErrorCode::kInternal, "dse: rank {} did not load its models within {:g} s", *missing.begin(),
                 options_.startup_timeout_s);
    }
    for (const auto& [r, bytes] : readies) {
      const nlohmann::json j = nlohmann::json::parse(bytes, nullptr, false);
      const std::string problem = j.is_discarded() ? "an unreadable message (a bug)" : j.value("problem", "");
      if (st.ok() && !problem.empty()) {
        st = Error(ErrorCode::kInvalidArgument, "dse: on {}: {}", dse::Who(peers_[r], r), problem);
      }
    }
    if (!st.ok()) {
      // Every rank is still in step: stop them cleanly, so that all finalize.
      for (int r = 1; r < size_; ++r) comm_.SendInts(r, kStop, {0});
      std::set<int> no_bye;
      Collect(comm_, kBye, size_, 10, &no_bye);
    }
    return st;
  }

  // 3. The points: dealt largest first, results appended as they come.
  void RunPoints() {
    std::vector<dse::Ledger::Point> todo = PointsToRun();
    prog_.phase = DseProgress::Phase::kSolving;
    prog_.total = static_cast<int>(todo.size());
    prog_.resumed = summary_.resumed;
    dse::Ledger ledger(std::move(todo));
    ledger_ = &ledger;
    StartPoints(ledger);
    // SIGTERM is how mpirun ends a job after a rank died: a second or so to
    // say which points were in flight.
    struct sigaction sa {}, old_term {}, old_int {};
    sa.sa_handler = OnSignal;
    sigemptyset(&sa.sa_mask);
    g_signal.store(0);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGINT, &sa, &old_int);
    Backoff backoff;
    std::chrono::microseconds wait{0};  // for rank 0's threads, when the last round found nothing
    auto last_check = Clock::now(), last_ping = Clock::now(), last_round = Clock::now();
    while (!ledger.Done() && io_error_.ok()) {
      if (Interrupted(ledger)) break;
      const bool busy = Exchange(ledger, wait);
      Watch(ledger, &last_check, &last_ping, &last_round);
      if (busy) backoff.Reset();
      wait = busy ? std::chrono::microseconds(0) : backoff.Next();
    }
    sigaction(SIGTERM, &old_term, nullptr);
    sigaction(SIGINT, &old_int, nullptr);
    EndPoints(ledger);
  }

  // The points not yet in the results file (the others are counted as
  // resumed), each with its estimate, lane and time limit for the ledger.
  std::vector<dse::Ledger::Point> PointsToRun() {
    const DseSpec& spec = s_.spec;
    std::vector<dse::Ledger::Point> todo;
    for (int i = 0; i < static_cast<int>(s_.points.size()); ++i) {
      const DsePoint& pt = s_.points[i];
      if (out_->done_keys().contains(dse::KeyOf(s_.sh, pt))) {
        ++summary_.resumed;
        continue;
      }
      const bool limited = FindSolver(pt.solver)->info().time_limit;
      const int ops = s_.sh.models[pt.model].graph.size();
      const int mean_ops = pt.second < 0 ? ops : (ops + s_.sh.models[pt.second].graph.size()) / 2;  // per request
      todo.push_back({i, dse::EstimatedSeconds(spec, pt, mean_ops), dse::InCbcLane(spec, pt),
                      limited ? spec.solve.time_limit_s : -1.0});
    }
    return todo;
  }

  // Gives every rank its share of the ledger, starts rank 0's own threads
  // and reports the first progress of the points.
  void StartPoints(dse::Ledger& ledger) {
    ts_ = Clock::now();
    // A rank's prefetch: points waiting in its queue, so that a freed thread
    // starts at once instead of after a round trip.
    ledger.AddRank(0, threads_, std::max(1, threads_ / 4), ts_);
    summary_.jobs = threads_;
    for (int r = 1; r < size_; ++r) {
      const int t = peers_[r].value("threads", 1);
      ledger.AddRank(r, t, std::max(1, t / 4), ts_);
      summary_.jobs += t;
    }
    local_ = std::make_unique<Outbox>();  // rank 0's own threads
    Outbox& local = *local_;
    pool_ = std::make_unique<dse::PointPool>(
        threads_, [&](int i, std::string*) { return dse::RunPoint(s_.sh, s_.points[i]); },
        [&](int i, bool, nlohmann::json line, std::string, double) {
          std::string text = LineText(line);
          local.Push({i, std::move(text), "", std::move(line)});
        });
    if (progress_) {
      prog_.elapsed_s = SecondsSince(t0_);
      progress_(prog_);
    }
  }

  // After a signal (SIGTERM, SIGINT): names the points every live rank held;
  // true when the points must stop.
  bool Interrupted(dse::Ledger& ledger) {
    const int sig = g_signal.load();
    if (sig == 0) return false;
    summary_.interrupted = true;
    for (int r = 0; r < size_; ++r) {
      const std::vector<int> held = ledger.Held(r);
      if (!held.empty() && !ledger.Lost(r)) {
        Report({r, fmt::format("held these points when the job was ended by signal {}", sig), held});
      }
    }
    return true;
  }

  // One round of the loop's work: rank 0's own results (waiting up to `wait`
  // for them), the workers' messages, and the points dealt. True when it
  // found something to do.
  bool Exchange(dse::Ledger& ledger, std::chrono::microseconds wait) {
    const auto tb = Clock::now();
    bool busy = false;
    for (Outbox::Item& it : local_->Take(wait)) {
      Write(0, it.index, it.line, std::move(it.json), "");
      busy = true;
    }
    // A bounded number of messages per round, so that dealing keeps up.
    Comm::Message m;
    for (int k = 0; k < 256 && comm_.Poll(MPI_ANY_SOURCE, &m); ++k) {
      busy = true;
      Receive(m);
    }
    for (const auto& [r, idx] : ledger.Deal()) {
      if (r == 0) {
        for (int i : idx) pool_->Submit(i, dse::InCbcLane(s_.spec, s_.points[i]));
      } else {
        comm_.SendInts(r, kAssign, idx);
      }
      busy = true;
    }
    comm_.Progress();
    if (busy) summary_.coordinator_busy_s += SecondsSince(tb);
    return busy;
  }

  // The ranks' health after a round: silent ranks and overdue points
  // reported (every 0.25 s), the workers pinged (every heartbeat).
  void Watch(dse::Ledger& ledger, Clock::time_point* last_check, Clock::time_point* last_ping,
             Clock::time_point* last_round) {
    const auto now = Clock::now();
    // This loop itself stood still (rank 0 stopped or starved, anywhere in
    // the round): what the others sent meanwhile may wait unread, so their
    // silence says nothing yet. Checked right before the silence check.
    if (std::chrono::duration<double>(now - *last_round).count() > options_.silence_timeout_s / 2) {
      ledger.HeardAll(now);
    }
    *last_round = now;
    if (std::chrono::duration<double>(now - *last_check).count() > 0.25) {
      *last_check = now;
      ledger.Heard(0, now);
      std::vector<std::pair<int, double>> running;
      for (const auto& r : pool_->RunningNow()) running.push_back({r.index, r.seconds});
      ledger.Running(0, running, now);
      for (const auto& e : ledger.Check(now, options_.silence_timeout_s, options_.overdue_grace_s)) Report(e);
    }
    if (std::chrono::duration<double>(now - *last_ping).count() > options_.heartbeat_s) {
      *last_ping = now;
      for (int r : ledger.LiveRanks()) {
        if (r != 0) comm_.Send(r, kPing, "");
      }
    }
  }

  // The points are over: the workers are told to finish and say goodbye,
  // unless a rank is lost or a thread is still in a point (then Finish ends
  // the job); the last progress line.
  void EndPoints(dse::Ledger& ledger) {
    dse::PointPool& pool = *pool_;
    summary_.solve_s = SecondsSince(ts_);
    summary_.wall_s = SecondsSince(t0_);
    if (summary_.interrupted || ledger.LiveRanks().size() < static_cast<size_t>(size_) || !io_error_.ok() ||
        !pool.RunningNow().empty()) {
      // A rank that cannot take part in MPI_Finalize, or a thread still in
      // a point: Finish ends the job instead.
      pool.Abandon();
      must_abort = true;
      stop_abort = !summary_.interrupted;
      comm_.Forget();
    } else {
      pool.Close();
      pool.Join();
      for (int r = 1; r < size_; ++r) comm_.SendInts(r, kStop, {0});
      std::set<int> no_bye;
      Collect(comm_, kBye, size_, std::max(10.0, options_.silence_timeout_s), &no_bye);
      if (!no_bye.empty()) must_abort = true;
    }
    ledger_ = nullptr;
    if (io_error_.ok()) dse::ReportDone(progress_, summary_, &prog_);
  }

  // A message from a worker during the points.
  void Receive(const Comm::Message& m) {
    const auto now = Clock::now();
    ledger_->Heard(m.source, now);
    if (m.tag == kResult) {
      ++summary_.results_in;
      summary_.result_bytes += static_cast<int64_t>(m.bytes.size());
      int index = -1;
      std::string text, schedule;
      if (!ParseResultFrame(m.bytes, &index, &text, &schedule) || index < 0 ||
          index >= static_cast<int>(s_.points.size())) {
        return;
      }
      nlohmann::json line = nlohmann::json::parse(text, nullptr, false);
      if (line.is_discarded() || line.value("key", "") != dse::KeyOf(s_.sh, s_.points[index])) return;
      Write(m.source, index, text, std::move(line), schedule);
    } else if (m.tag == kHeartbeat) {
      const nlohmann::json j = nlohmann::json::parse(m.bytes, nullptr, false);
      if (!j.is_discarded() && j.contains("running")) {
        ledger_->Running(m.source, j["running"].get<std::vector<std::pair<int, double>>>(), now);
      }
    }
  }

  // Appends a point's line (and writes its schedule file: rank 0 writes
  // every output, so that no rank needs a shared folder to write to).
  void Write(int rank, int index, const std::string& text, nlohmann::json line, const std::string& schedule) {
    if (!ledger_->Finished(rank, index)) return;  // from a rank declared lost: dropped, rerun on resume
    std::string to_write = text;
    if (!schedule.empty()) {
      if (Status ws = WriteFileAtomic(line.value("schedule_file", ""), schedule); !ws.ok()) {
        line["status"] = "error";
        line["message"] = ws.message();
        line.erase("schedule_file");
        to_write = LineText(line);
      }
    }
    if (Status as = out_->Append(to_write); !as.ok()) io_error_ = as;
    const std::string what = dse::Describe(s_.sh, s_.points[index]);
    dse::CountOutcome(line, what, &summary_);
    if (progress_) {
      prog_.done = summary_.ran;
      prog_.elapsed_s = SecondsSince(t0_);
      prog_.eta_s = SecondsSince(ts_) / std::max(1, summary_.ran) * (prog_.total - summary_.ran);
      prog_.message = fmt::format("{}: {}", what, line.value("status", ""));
      progress_(prog_);
    }
  }

  void Report(const dse::Ledger::Event& e) {
    const std::string who =
        e.rank == 0 ? fmt::format("rank 0 (host {})", s_.sh.run_host) : dse::Who(peers_[e.rank], e.rank);
    summary_.unfinished.push_back(
        fmt::format("{} {}; not written: {}", who, e.what, PointList(s_.sh, s_.points, e.points)));
    summary_.unfinished_points += static_cast<int>(e.points.size());
  }

  const DseMpiOptions& options_;
  const DseProgressFn& progress_;
  const int size_, threads_;
  DseSummary summary_;
  Comm comm_;
  dse::Start s_;
  std::optional<dse::ResultsFile> out_;
  std::map<int, nlohmann::json> peers_;  // their hellos
  dse::Ledger* ledger_ = nullptr;        // during RunPoints
  // Rank 0's threads and what they hand their results to (RunPoints). Members,
  // not locals: a job that ends with a thread still in a point leaks them (see
  // DseMpiJob::Run), and the thread goes on using them until the process ends.
  std::unique_ptr<Outbox> local_;
  std::unique_ptr<dse::PointPool> pool_;
  DseProgress prog_;
  Status io_error_;
  Clock::time_point t0_, ts_;
};

// ---------------------------------------------------------------------------
// Ranks 1..N-1.

struct Worker {
  Worker(const DseMpiOptions& o, int r, int t, bool* abort, bool* hard)
      : options(o), rank(r), threads(t), must_abort(abort), exit_hard(hard) {}

  const DseMpiOptions& options;
  int rank;
  int threads;
  bool* must_abort;
  bool* exit_hard;
  // What the point threads use: members, so that a rank that ends with a
  // thread still in a point can leak them (see DseMpiJob::Run).
  dse::Start s;
  std::unique_ptr<Outbox> outbox_;
  std::unique_ptr<dse::PointPool> pool_;

  Result<DseSummary> Run(const DseSpec& spec_in) {
    DseSummary summary;
    Comm comm(nullptr);
    Prepare(spec_in, BuildId(), options.arguments, rank, threads, &s);
    comm.Send(0, kHello, s.hello.dump());
    std::string go;
    Broadcast(&go, rank);
    // Rank 0 reports every error found before the points (its own and the
    // ranks'): a worker that is told to stop just stops, quietly.
    if (go.rfind("go\n", 0) != 0) return summary;
    Status st = s.status;
    if (st.ok() && go.substr(3) != s.sh.run_host) st = dse::LoadModels(&s);
    std::string payload;
    Broadcast(&payload, rank);
    if (payload.empty()) return summary;
    if (st.ok()) st = dse::AcceptCosts(payload, &s);
    comm.Send(0, kReady, nlohmann::json{{"problem", st.ok() ? "" : st.message()}}.dump());

    outbox_ = std::make_unique<Outbox>();
    Outbox& outbox = *outbox_;
    pool_ = std::make_unique<dse::PointPool>(
        st.ok() ? threads : 0,
        [&](int i, std::string* schedule) { return dse::RunPoint(s.sh, s.points[i], schedule); },
        [&](int i, bool, nlohmann::json line, std::string schedule, double) {
          outbox.Push({i, LineText(line), std::move(schedule), nullptr});
        },
        /*want_schedule=*/true);
    dse::PointPool& pool = *pool_;
    Backoff backoff;
    std::chrono::microseconds wait{0};
    auto heard = Clock::now();
    auto beat = Clock::now();
    bool stop = false, abort = false;
    auto last_round = Clock::now();
    while (!stop) {
      bool busy = false;
      Comm::Message m;
      while (comm.Poll(0, &m)) {
        busy = true;
        heard = Clock::now();
        if (m.tag == kAssign) {
          for (int i : Ints(m.bytes)) {
            if (i >= 0 && i < static_cast<int>(s.points.size())) pool.Submit(i, dse::InCbcLane(s.spec, s.points[i]));
          }
        } else if (m.tag == kStop) {
          const std::vector<int> v = Ints(m.bytes);
          stop = true;
          abort = !v.empty() && v[0] != 0;
        }
      }
      for (Outbox::Item& it : outbox.Take(wait)) {
        comm.Send(0, kResult, ResultFrame(it.index, it.line, it.schedule));
        ++summary.ran;
        busy = true;
      }
      // Also when results flow: it carries what the threads run, for rank 0
      // to see a point overrun its time limit.
      if (SecondsSince(beat) >= options.heartbeat_s) {
        nlohmann::json running = nlohmann::json::array();
        for (const auto& r : pool.RunningNow()) running.push_back({r.index, r.seconds});
        comm.Send(0, kHeartbeat, nlohmann::json{{"running", running}}.dump());
        beat = Clock::now();
      }
      comm.Progress();
      // Stopped or starved ourselves (SIGSTOP, a swapping node) anywhere in
      // this round: rank 0's messages wait unread, so its silence says
      // nothing yet. Right before the silence check, so that a rank resumed
      // (SIGCONT) in the middle of a round does not blame rank 0.
      if (SecondsSince(last_round) > options.silence_timeout_s / 2) heard = Clock::now();
      last_round = Clock::now();
      if (!stop && SecondsSince(heard) > options.silence_timeout_s) {
        // Rank 0 is gone (a job started with --enable-recovery goes on
        // after a death): nobody would take the results.
        pool.Abandon();
        *must_abort = true;
        return Error(ErrorCode::kInternal, "dse: rank {}: nothing from rank 0 for {:.0f} s; stopping", rank,
                     SecondsSince(heard));
      }
      if (busy) backoff.Reset();
      wait = busy ? std::chrono::microseconds(0) : backoff.Next();
    }
    if (abort) {
      pool.Abandon();
      *must_abort = true;
      return summary;
    }
    if (!pool.RunningNow().empty()) {
      pool.Abandon();  // a hung point rank 0 already reported
      *exit_hard = true;
    } else {
      pool.Close();
      pool.Join();
    }
    comm.Send(0, kBye, nlohmann::json{{"ran", summary.ran}}.dump());
    comm.Drain(10);
    return summary;  // an error of this rank's (st) went to rank 0 in its ready
  }
};

}  // namespace

Result<std::unique_ptr<DseMpiJob>> DseMpiJob::Init(const MpiLaunch& launch) {
  if (launch.launcher == "Slurm without PMI") {
    return Error(ErrorCode::kInvalidArgument,
                 "dse: srun started {} tasks without an MPI plugin, so they cannot find each other: use srun "
                 "--mpi=pmix (or pmi2; `srun --mpi=list` shows them)",
                 launch.size);
  }
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  std::unique_ptr<DseMpiJob> job(new DseMpiJob());
  MPI_Comm_rank(MPI_COMM_WORLD, &job->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &job->size_);
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    return Error(ErrorCode::kUnsupported,
                 "dse: the MPI library offers only MPI_THREAD_SINGLE; hetplan dse needs MPI_THREAD_FUNNELED (its "
                 "worker threads never call MPI, but they exist)");
  }
  // Ranks sharing this node share its cores.
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  MPI_Comm_size(local, &job->local_size_);
  MPI_Comm_free(&local);
  return job;
}

DseMpiJob::~DseMpiJob() {
  if (!finished_) Finish(0);
}

Result<DseSummary> DseMpiJob::Run(const DseSpec& spec_in, const DseMpiOptions& options,
                                  const DseProgressFn& progress) {
  if (size_ == 1) return RunDse(spec_in, progress);
  DseSpec spec = spec_in;
  const int threads = RankThreads(spec, local_size_);
  // CBC's "all cores" is this rank's share of them.
  if (spec.solve.threads == 0) spec.solve.threads = threads;
  if (rank_ == 0) {
    auto c = std::make_unique<Coordinator>(options, progress, size_, threads);
    Result<DseSummary> r = c->Run(spec);
    must_abort_ = c->must_abort;
    stop_abort_ = c->stop_abort;
    // A job that ends by abort (a rank lost, a hung point, SIGTERM from
    // mpirun) may have a thread still in a point, which uses the
    // coordinator's state until the process ends; and mpirun's SIGKILL
    // follows its SIGTERM within a second, too soon to free models and
    // sessions before reporting. So that state is never freed.
    if (must_abort_) (void)c.release();
    return r;
  }
  std::unique_ptr<Worker> w(new Worker{options, rank_, threads, &must_abort_, &exit_hard_});
  Result<DseSummary> r = w->Run(spec);
  if (must_abort_ || exit_hard_) (void)w.release();  // as above: threads may still use it
  return r;
}

int DseMpiJob::Finish(int exit_code) {
  if (finished_) return exit_code;
  finished_ = true;
  std::fflush(stdout);
  std::fflush(stderr);
  if (must_abort_) {
    if (rank_ == 0 && stop_abort_) {
      // Tell the live workers to stop before the job ends, so that none
      // waits for a rank 0 that is gone (--enable-recovery keeps them).
      for (int r = 1; r < size_; ++r) {
        MPI_Request req;
        static const int kAbort = 1;
        MPI_Isend(&kAbort, 1, MPI_INT, r, kStop, MPI_COMM_WORLD, &req);
        MPI_Request_free(&req);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      MPI_Abort(MPI_COMM_WORLD, exit_code);
    }
    if (rank_ != 0) {
      // Rank 0 ends the job (MPI_Abort); wait to be ended with it.
      std::this_thread::sleep_for(std::chrono::seconds(10));
    }
    std::_Exit(exit_code);
  }
  MPI_Finalize();
  if (exit_hard_) std::_Exit(exit_code);  // a thread is still in a hung point
  return exit_code;
}

#endif  // HETPLAN_HAVE_MPI

}  // namespace hetplan
