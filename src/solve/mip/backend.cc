// The MIP backends behind mip/backend.h.
#include "solve/mip/backend.h"

#include "hetplan/solve/solver.h"
#include "solve/mip/cbc_driver.h"
#if HETPLAN_HAVE_HIGHS
#include "solve/mip/highs_driver.h"
#endif

namespace hetplan::mip_internal {

bool MipBackendAvailable(MipBackend backend) { return backend != MipBackend::kHighs || HETPLAN_HAVE_HIGHS; }

std::string MipBackendVersion(MipBackend backend) {
  if (ResolveMipBackend(backend) == MipBackend::kCbc) return CbcVersionText();
#if HETPLAN_HAVE_HIGHS
  return HighsVersionText();
#else
  return "HiGHS";
#endif
}

Status CheckMipBackend(const SolveOptions& options) {
  if (MipBackendAvailable(options.mip.backend)) return Status::Ok();
  return Error(ErrorCode::kUnsupported,
               "--mip-backend {}: this hetplan was built without HiGHS; run scripts/setup_highs.sh and rebuild "
               "(cmake finds third_party/highs), or use --mip-backend cbc",
               ToString(options.mip.backend));
}

SolveOptions AutoOnCbc(const SolveOptions& options) {
  SolveOptions on = options;
  if (on.mip.backend == MipBackend::kAuto) on.mip.backend = MipBackend::kCbc;
  return on;
}

Result<MipOutcome> RunMip(const ModelBuilder& mb, const SolveOptions& options, const std::vector<double>* warm,
                          const Deadline& deadline) {
  HETPLAN_RETURN_IF_ERROR(CheckMipBackend(options));
  if (ResolveMipBackend(options.mip.backend) == MipBackend::kCbc) return RunCbc(mb, options, CbcThreads(options), warm, deadline);
#if HETPLAN_HAVE_HIGHS
  HETPLAN_RETURN_IF_ERROR(WriteModels(mb, options));
  return RunHighs(mb, options, ThreadCount(options), warm, deadline);
#else
  return Error(ErrorCode::kInternal, "mip: no HiGHS in this build");
#endif
}

}  // namespace hetplan::mip_internal

namespace hetplan {

MipBackend ResolveMipBackend(MipBackend backend) {
  if (backend != MipBackend::kAuto) return backend;
  return HETPLAN_HAVE_HIGHS ? MipBackend::kHighs : MipBackend::kCbc;
}

std::vector<MipBackendInfo> ListMipBackends() {
  std::vector<MipBackendInfo> out;
  for (MipBackend b : {MipBackend::kCbc, MipBackend::kHighs}) {
    if (mip_internal::MipBackendAvailable(b)) out.push_back({b, mip_internal::MipBackendVersion(b)});
  }
  return out;
}

}  // namespace hetplan
