// `hetplan dse` across machines under MPI (docs/dse.md#mpi): the same sweep,
// the same results file, spread over every rank that mpirun or srun starts.
//
// Rank 0 coordinates: it checks that every rank runs the same hetplan with
// the same arguments, locks the results file, loads the models and decides
// their costs once (profiling on its host through the cache, or reading the
// tables) while the other ranks wait idle, sends those tables with their
// provenance to every rank, then hands out points largest first, a few at a
// time per rank as its threads free up, and appends each result line as it
// arrives. Every rank, rank 0 included, runs its points on its own worker
// threads with the single-machine exclusive CBC lane. Ranks load the models
// from their own file system and check them against rank 0's hashes.
//
// Only each rank's main thread calls MPI (MPI_THREAD_FUNNELED): the worker
// threads hand results to it through an in-process queue, so the MPI library
// need not be thread-safe and no lock is held across an MPI call. Waiting is
// polling (MPI_Improbe, MPI_Test) with short sleeps, never a blocking call: a
// blocking call spins a core inside Open MPI, which would steal it from the
// worker threads and from rank 0's profiling.
//
// Failures (what is and is not recoverable, docs/dse.md#mpi): a rank that
// sends nothing (no result, no heartbeat) for `silence_timeout_s` is lost —
// its points are reported and not rerun in this job (a point that kills its
// rank would kill the next one too); a time-limited point still running
// `overdue_grace_s` past its limit is reported as hung. The sweep goes on with
// the other ranks; at the end the points not written are listed and
// `--resume` reruns them. A rank that dies outright makes Open MPI's mpirun
// end the whole job unless it was started with --enable-recovery; rank 0 then
// gets SIGTERM and lists the points in flight before it ends.
#pragma once

#include <memory>
#include <string>

#include "hetplan/dse/dse.h"
#include "hetplan/util/status.h"

namespace hetplan {

// How this process was started, from the launcher's environment variables
// only (no MPI call, so a plain `hetplan` never touches an MPI runtime).
struct MpiLaunch {
  bool launched = false;  // by mpirun/mpiexec (Open MPI, MPICH) or srun with a PMI plugin
  int size = 1;           // the ranks the launcher started, when it says (else 1)
  int rank = 0;
  std::string launcher;  // "Open MPI", "PMIx", "PMI", or "Slurm without PMI" (srun --mpi=none)
};
MpiLaunch DetectMpiLaunch();

// Whether this hetplan was built with MPI (CMake found libopenmpi-dev).
bool BuiltWithMpi();

struct DseMpiOptions {
  // The command line as parsed, every option with its value: every rank must
  // be given the same (the CLI passes CLI11's config_to_str).
  std::string arguments;
  double heartbeat_s = 1.0;         // a rank that has sent nothing this long sends a heartbeat
  double silence_timeout_s = 60;    // a rank not heard from for this long is lost
  double overdue_grace_s = 60;      // a time-limited point running this long past its limit is hung
  double startup_timeout_s = 600;   // every rank checks in (arguments, files) within this
};
// The defaults, with HETPLAN_DSE_HEARTBEAT_S, HETPLAN_DSE_SILENCE_S and
// HETPLAN_DSE_GRACE_S from the environment when set (tests use short ones).
DseMpiOptions DseMpiOptionsFromEnvironment(std::string arguments);

// One MPI job: MPI_Init_thread on Init, MPI_Finalize (or the end of the job
// when it cannot finalize) on Finish.
class DseMpiJob {
 public:
  // Initialises MPI (MPI_THREAD_FUNNELED). Errors: a build without MPI
  // started as several ranks, an MPI library without FUNNELED support, or
  // `srun` starting several tasks without a PMI plugin.
  static Result<std::unique_ptr<DseMpiJob>> Init(const MpiLaunch& launch);
  ~DseMpiJob();
  DseMpiJob(const DseMpiJob&) = delete;
  DseMpiJob& operator=(const DseMpiJob&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Runs the sweep on every rank (one rank: RunDse). Rank 0 returns the
  // sweep's summary or its error — including errors found on other ranks
  // (other arguments or hetplan, a model missing or different there), named
  // with the rank and host. The other ranks return a summary of their share
  // (also when rank 0 stopped the job over an error it reports); their only
  // error is losing rank 0, which nobody else could report.
  Result<DseSummary> Run(const DseSpec& spec, const DseMpiOptions& options, const DseProgressFn& progress = {});

  // Ends MPI and returns `exit_code`: MPI_Finalize when every rank can take
  // part; otherwise (a rank lost or hung, a point still running, a signal)
  // the job is ended with `exit_code` without returning — the one place the
  // library ends a process, because MPI offers no other way out of a job
  // with a dead or stuck rank.
  int Finish(int exit_code);

 private:
  DseMpiJob() = default;
  int rank_ = 0, size_ = 1;
  int local_size_ = 1;        // ranks on this node
  bool finished_ = false;
  bool must_abort_ = false;   // Finish cannot finalize: it ends the job
  bool stop_abort_ = false;   // rank 0: tell the live workers before ending the job
  bool exit_hard_ = false;    // finalize, then end at once (a thread is stuck in a point)
};

}  // namespace hetplan
