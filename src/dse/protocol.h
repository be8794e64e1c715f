// The MPI sweep's messages that need no MPI to make or read, so that they
// can be tested alone: each rank's hello (its build, arguments and view of
// the files) and rank 0's check of it, the cost tables rank 0 sends, and the
// frames that carry the points and their results.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dse/internal.h"

namespace hetplan::dse {

// What every rank prepares before anything is exchanged: the checked spec,
// the points, the platform variants, its hello.
struct Start {
  DseSpec spec;
  std::vector<DsePoint> points;
  Shared sh;
  Status status;  // the spec's or a platform's error, found identically on every rank
  nlohmann::json hello;
};

// Checks the spec, expands the points, loads the platforms and writes the
// hello: `build` (BuildId), `arguments` (DseMpiOptions::arguments), the
// spec's fingerprint, host, pid, working folder, threads, the check's error,
// per model whether this rank can read it, per platform a hash of it as
// loaded here.
void Prepare(const DseSpec& spec, const std::string& build, const std::string& arguments, int rank, int threads,
             Start* s);

// This machine's host name.
std::string HostName();

// "rank 2 (host node7, pid 1234)"
std::string Who(const nlohmann::json& hello, int rank);

// The first way `theirs` (rank `rank`) disagrees with rank 0's hello: another
// build, other arguments (naming the first that differs), an error in the
// spec, a model it cannot read, a platform that reads differently there.
Status CompareHello(const nlohmann::json& ours, const nlohmann::json& theirs, int rank);

// The cost tables of every (model, variant), each distinct table once, with
// their notes and rank 0's model hashes and CPU.
std::string CostsPayload(const Shared& sh);

// On a worker: loads the models from this rank's file system.
Status LoadModels(Start* s);

// On a worker: loads the models unless LoadModels did, refuses one whose hash
// differs from rank 0's, and takes the cost tables.
Status AcceptCosts(const std::string& payload, Start* s);

// A results line as one line of text, as it is sent and appended.
std::string LineText(const nlohmann::json& line);

// A worker's result: "index\nline\nschedule".
std::string ResultFrame(int index, const std::string& line, const std::string& schedule);
// Reads a ResultFrame; false when it lacks a part.
bool ParseResultFrame(const std::string& bytes, int* index, std::string* line, std::string* schedule);

// The ints a message carries (point indices to run, the stop's flag).
std::vector<int> Ints(const std::string& bytes);

}  // namespace hetplan::dse
