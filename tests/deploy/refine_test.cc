// --refine (app/refine.h): the segment fit recovers what it is given, the
// refitted cost model is the base one scaled and charged, and the loop on a
// real split of a residual block stops when it should, keeps every round and
// never keeps a plan that the final calibration says is slower than another.
#include "hetplan/app/refine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "hetplan/util/io.h"
#include "hetplan/validate/validator.h"
#include "testing/helpers.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;

TEST(FitSegments, RecoversScaleAndBoundary) {
  std::vector<SegmentSample> s;
  for (double x : {100.0, 250.0, 40.0, 900.0}) {
    s.push_back({x, false, 1.25 * x});
    s.push_back({x / 2, true, 1.25 * x / 2 + 30});
  }
  const SegmentFit f = FitSegments(s, 7);
  EXPECT_NEAR(f.scale, 1.25, 1e-12);
  EXPECT_NEAR(f.boundary_us, 30, 1e-9);
  EXPECT_TRUE(f.boundary_fitted);
  EXPECT_EQ(f.samples, 8);
}

TEST(FitSegments, WhatTheSamplesCannotTellKeepsThePrior) {
  // One segment, never entered from another PU (a CPU-only plan): the scale
  // only, the boundary stays the profile's.
  SegmentFit one = FitSegments({{200, false, 220}}, 12);
  EXPECT_NEAR(one.scale, 1.1, 1e-12);
  EXPECT_EQ(one.boundary_us, 12);
  EXPECT_FALSE(one.boundary_fitted);
  // Entered segments only, all of one predicted size: no way to tell the
  // scale from the boundary.
  SegmentFit entered = FitSegments({{100, true, 150}, {100, true, 160}}, 10);
  EXPECT_EQ(entered.boundary_us, 10);
  EXPECT_FALSE(entered.boundary_fitted);
  EXPECT_NEAR(entered.scale, (100 * 140 + 100 * 150) / (100.0 * 100 + 100.0 * 100), 1e-12);
  // Entered ones of two sizes do tell them apart: 150 = 1.4 × 100 + 10,
  // 290 = 1.4 × 200 + 10.
  SegmentFit sizes = FitSegments({{100, true, 150}, {200, true, 290}}, 0);
  EXPECT_NEAR(sizes.scale, 1.4, 1e-9);
  EXPECT_NEAR(sizes.boundary_us, 10, 1e-9);
  EXPECT_TRUE(sizes.boundary_fitted);
  // A negative boundary is noise: 0, and the scale alone.
  SegmentFit negative = FitSegments({{100, false, 120}, {100, true, 110}, {300, false, 360}}, 10);
  EXPECT_EQ(negative.boundary_us, 0);
  EXPECT_TRUE(negative.boundary_fitted);
  EXPECT_GT(negative.scale, 1);
  // Nothing usable: the model as it was.
  SegmentFit none = FitSegments({{0, true, 50}}, 3);
  EXPECT_EQ(none.samples, 0);
  EXPECT_EQ(none.scale, 1);
  EXPECT_EQ(none.boundary_us, 3);
}

TEST(ApplySegmentFits, ScalesThePusCostsAndChargesItsBoundary) {
  PuInfo cpu, cim;
  cpu.name = "cpu";
  cim.name = "cim";
  cim.spatial = true;
  cim.capacity = 10;
  CostModel base(2, {cpu, cim}, 1);
  base.set_latency(0, 0, 10);
  base.set_latency(1, 0, 20);
  base.set_latency(1, 1, 5);
  base.set_transfer(0, 1, 0, 3);
  base.set_transfer(0, 0, 1, 4);
  base.ChargeBoundary(0, 6);
  SegmentFit f;
  f.scale = 1.5;
  f.boundary_us = 2;
  const CostModel c = ApplySegmentFits(base, {{0, f}});
  EXPECT_DOUBLE_EQ(c.latency_us(0, 0), 15);
  EXPECT_DOUBLE_EQ(c.latency_us(1, 0), 30);
  EXPECT_DOUBLE_EQ(c.latency_us(1, 1), 5);  // the CIM is modelled: not refitted
  EXPECT_DOUBLE_EQ(c.boundary_us(0), 2);
  EXPECT_DOUBLE_EQ(c.transfer_us(0, 1, 0), 3 + 2);  // into the CPU: base + the fitted boundary
  EXPECT_DOUBLE_EQ(c.transfer_us(0, 0, 1), 4);
}

// The residual block of the deploy tests on klein-arm, profiled cheaply.
class RefineBlock : public ::testing::Test {
 protected:
  // A failure here is kept in setup_error_ and reported by every test: a
  // fatal failure inside SetUpTestSuite would mark the tests skipped.
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("hetplan_refine_" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    onnx::ModelProto m = test_util::ResidualBlock(8, 16);
    test_util::AddNode(m.mutable_graph(), "Relu", {"s"}, {"y"}, "/out/Relu");
    std::string bytes;
    if (!m.SerializeToString(&bytes)) {
      setup_error_ = "cannot serialise the block";
      return;
    }
    const std::string model = (*dir_ / "block.onnx").string();
    if (auto w = WriteFileAtomic(model, bytes); !w.ok()) {
      setup_error_ = w.message();
      return;
    }
    PlanInputs in;
    in.model_path = model;
    in.platform = "klein-arm";
    in.costs.profile.warmup = 2;
    in.costs.profile.runs = 5;
    in.costs.profile.model_runs = 3;
    in.costs.profile.in_context = false;
    in.costs.profile.boundary_runs = 2;
    in.costs.profile.cache_dir = (*dir_ / "cache").string();
    auto pp = PrepareProblem(in);
    if (!pp.ok()) {
      setup_error_ = pp.status().message();
      return;
    }
    pp_ = new PreparedProblem(std::move(pp).value());
  }
  static void TearDownTestSuite() {
    delete pp_;
    std::error_code ec;
    fs::remove_all(*dir_, ec);
    delete dir_;
  }
  static PlanSpec Spec() {
    PlanSpec spec;
    spec.options.time_limit_s = 30;
    spec.options.threads = 1;
    return spec;
  }
  static RefineOptions Options(int rounds, double tolerance) {
    RefineOptions o;
    o.rounds = rounds;
    o.tolerance = tolerance;
    o.run.runs = 3;
    o.run.warmup = 1;
    return o;
  }
  static fs::path* dir_;
  static PreparedProblem* pp_;
  static std::string setup_error_;
};
std::string RefineBlock::setup_error_;
fs::path* RefineBlock::dir_ = nullptr;
PreparedProblem* RefineBlock::pp_ = nullptr;

TEST_F(RefineBlock, StopsAtOnceWhenThePredictionAgrees) {
  ASSERT_NE(pp_, nullptr) << setup_error_;
  int called = 0;
  RefineOptions o = Options(3, 100.0);  // any error agrees
  o.progress = [&](int round, double predicted, double measured) {
    EXPECT_EQ(round, called++);
    EXPECT_GT(predicted, 0);
    EXPECT_GT(measured, 0);
  };
  auto r = Refine(*pp_, Spec(), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->rounds.size(), 1u);
  EXPECT_EQ(called, 1);
  EXPECT_TRUE(r->converged);
  EXPECT_EQ(r->best, 0);
  EXPECT_TRUE(r->rounds[0].fits.empty());  // round 0 plans on the profile
  const nlohmann::json& h = r->plan.schedule["refine"];
  EXPECT_EQ(h["rounds"].size(), 1u);
  EXPECT_EQ(h["kept_round"], 0);
  EXPECT_TRUE(h["converged"].get<bool>());
  EXPECT_TRUE(ValidateScheduleJson(r->plan.schedule).ok());
}

TEST_F(RefineBlock, SpendsItsRoundsAndKeepsTheBestCalibratedPlan) {
  ASSERT_NE(pp_, nullptr) << setup_error_;
  RefineOptions o = Options(2, 0.0);  // never agrees (a measured error of exactly 0 aside)
  o.work_dir = (*dir_ / "rounds").string();
  auto r = Refine(*pp_, Spec(), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  if (r->converged) GTEST_SKIP() << "measured exactly as predicted";
  ASSERT_EQ(r->rounds.size(), 3u);
  EXPECT_NE(r->stopped.find("2 re-plans spent"), std::string::npos) << r->stopped;
  for (int k = 0; k < 3; ++k) {
    const RefineRound& round = r->rounds[static_cast<size_t>(k)];
    EXPECT_EQ(round.round, k);
    EXPECT_GT(round.measured_host_us, 0);
    EXPECT_NEAR(round.host_error, round.measured_host_us / round.predicted_host_us - 1, 1e-12);
    EXPECT_TRUE(fs::exists(fs::path(o.work_dir) / ("round-" + std::to_string(k)) / "manifest.json"));
    // The kept plan is never slower on the final calibration than another round's.
    EXPECT_LE(r->rounds[static_cast<size_t>(r->best)].calibrated_makespan_us, round.calibrated_makespan_us);
    if (k > 0) {
      ASSERT_EQ(round.fits.count("cpu"), 1u);  // re-planned on the CPU's fitted costs
      EXPECT_GT(round.fits.at("cpu").scale, 0);
      EXPECT_EQ(round.fits.count("cim"), 0u);  // modelled, never refitted
      EXPECT_GE(round.fits.at("cpu").samples, r->rounds[static_cast<size_t>(k - 1)].fits.count("cpu")
                                                  ? r->rounds[static_cast<size_t>(k - 1)].fits.at("cpu").samples
                                                  : 1);
    }
  }
  const nlohmann::json& h = r->plan.schedule["refine"];
  EXPECT_EQ(h["rounds"].size(), 3u);
  EXPECT_EQ(h["kept_round"], r->best);
  EXPECT_FALSE(h["converged"].get<bool>());
  EXPECT_TRUE(h["calibration"].contains("cpu"));
  EXPECT_EQ(r->plan.schedule["makespan_us"].get<double>(), r->rounds[static_cast<size_t>(r->best)].plan.makespan_us);
  EXPECT_TRUE(ValidateScheduleJson(r->plan.schedule).ok());
}

TEST_F(RefineBlock, BadOptionsAreOneLineErrors) {
  ASSERT_NE(pp_, nullptr) << setup_error_;
  PlanSpec energy = Spec();
  energy.objective = Objective::kEnergy;
  auto e = Refine(*pp_, energy, Options(1, 0.05));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(e.status().message().find("--objective latency"), std::string::npos);
  // A platform whose costs are all modelled has nothing to calibrate.
  PlanInputs in;
  in.model_path = (*dir_ / "block.onnx").string();
  in.platform = "soc-example";
  auto soc = PrepareProblem(in);
  ASSERT_TRUE(soc.ok()) << soc.status().message();
  auto modelled = Refine(*soc, Spec(), Options(1, 0.05));
  ASSERT_FALSE(modelled.ok());
  EXPECT_EQ(modelled.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(modelled.status().message().find("cpu: roofline"), std::string::npos) << modelled.status().message();
  EXPECT_NE(modelled.status().message().find("cost: profile"), std::string::npos);
  for (auto [rounds, tolerance] : {std::pair{-1, 0.05}, std::pair{101, 0.05}, std::pair{1, -0.5}}) {
    auto bad = Refine(*pp_, Spec(), Options(rounds, tolerance));
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(bad.status().message().find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace hetplan
