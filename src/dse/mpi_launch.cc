// What a rank of `hetplan dse` learns from its launch (dse/mpi.h): which
// launcher started it, the options set in the environment, and its share of
// the node's cores. No MPI call here, so this file is compiled in every build
// (only mpi.cc gets MPI's flags).
#include "hetplan/dse/mpi.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

#include "dse/mpi_internal.h"

namespace hetplan {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

int EnvInt(const char* name, int fallback) {
  const std::string v = Env(name);
  if (v.empty()) return fallback;
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  return end != v.c_str() && *end == '\0' ? static_cast<int>(n) : fallback;
}

double EnvSeconds(const char* name, double fallback) {
  const std::string v = Env(name);
  if (v.empty()) return fallback;
  char* end = nullptr;
  const double s = std::strtod(v.c_str(), &end);
  return end != v.c_str() && *end == '\0' && s > 0 ? s : fallback;
}

}  // namespace

MpiLaunch DetectMpiLaunch() {
  MpiLaunch l;
  // Open MPI's mpirun (and its srun integration) sets OMPI_COMM_WORLD_*;
  // PMIx launchers (srun --mpi=pmix, prrte) PMIX_RANK; MPICH's hydra and
  // srun --mpi=pmi2 PMI_RANK/PMI_SIZE.
  if (!Env("OMPI_COMM_WORLD_SIZE").empty()) {
    l = {true, EnvInt("OMPI_COMM_WORLD_SIZE", 1), EnvInt("OMPI_COMM_WORLD_RANK", 0), "Open MPI"};
  } else if (!Env("PMIX_RANK").empty()) {
    l = {true, EnvInt("SLURM_NTASKS", 1), EnvInt("PMIX_RANK", 0), "PMIx"};
  } else if (!Env("PMI_RANK").empty() || !Env("PMI_SIZE").empty()) {
    l = {true, EnvInt("PMI_SIZE", 1), EnvInt("PMI_RANK", 0), "PMI"};
  } else if (EnvInt("SLURM_STEP_NUM_TASKS", EnvInt("SLURM_NTASKS", 1)) > 1 && !Env("SLURM_PROCID").empty()) {
    // srun started several copies but gave them no way to find each other.
    l = {true, EnvInt("SLURM_STEP_NUM_TASKS", EnvInt("SLURM_NTASKS", 1)), EnvInt("SLURM_PROCID", 0),
         "Slurm without PMI"};
  }
  return l;
}

DseMpiOptions DseMpiOptionsFromEnvironment(std::string arguments) {
  DseMpiOptions o;
  o.arguments = std::move(arguments);
  o.heartbeat_s = EnvSeconds("HETPLAN_DSE_HEARTBEAT_S", o.heartbeat_s);
  o.silence_timeout_s = EnvSeconds("HETPLAN_DSE_SILENCE_S", o.silence_timeout_s);
  o.overdue_grace_s = EnvSeconds("HETPLAN_DSE_GRACE_S", o.overdue_grace_s);
  return o;
}

namespace dse {

int RankThreads(const DseSpec& spec, int local_ranks) {
  if (spec.jobs > 0) return spec.jobs;
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int mine = CPU_COUNT(&set);
    // Bound by the launcher to a subset of cores: those are this rank's.
    if (mine > 0 && mine < hw) return mine;
  }
  return std::max(1, hw / std::max(1, local_ranks));
}

}  // namespace dse
}  // namespace hetplan
