// Internal to solve/: the CIM paper's MIP (Klein et al., §IV-B, eqs. 5–14)
// generalised to K processing units, as rows and columns (no solver here: the
// CBC driver loads it, mip/cbc_driver.h). See mip/solver.cc for what is solved.
//  * x_{v,p} binary for each (v, p) where v is supported on p and, on a
//    spatial PU, fits its capacity alone; Σ_p x_{v,p} = 1.
//  * s_v ≥ 0 continuous; f_v = s_v + Σ_p T_{v,p} x_{v,p} is substituted.
//  * Edge (u, v): s_v ≥ f_u + transfer. With two PUs and a symmetric transfer,
//    the paper's z_e ≥ |x_u − x_v|; otherwise y_{e,p,q} ≥ x_{u,p} + x_{v,q} − 1
//    per ordered PU pair with a positive transfer. z and y are continuous in
//    [0, 1]: they are only bounded from below by integral expressions, so
//    they take 0/1 values in every optimal vertex.
//  * Parallelizable pairs {u, v} with a common serial PU: one ordering binary
//    o_{u,v} shared by all serial PUs (the order only matters on the PU both
//    run on; eqs. 11–12 are relaxed by M on every other PU).
//  * Spatial capacity: Σ_v crossbars(v, p) x_{v,p} ≤ capacity (eq. 14).
//  * M = Σ_v max_p T_{v,p} + Σ_e max_{p≠q} transfer (eq. 13); s_v, T ≤ M.
//  * Added valid inequality (not in the paper): T ≥ Σ_v T_{v,p} x_{v,p} for
//    each serial PU p, which lifts the LP bound on wide graphs.
// Objectives: latency min T (T ≥ f_v for sinks); energy min Σ x T power,
// with T ≤ latency_cap_us when the problem gives one.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "hetplan/plan/problem.h"

namespace hetplan::mip_internal {

inline constexpr double kLpInf = std::numeric_limits<double>::max();  // = COIN_DBL_MAX

// ---------------------------------------------------------------------------
// A small row-wise model builder: columns with bounds, objective, integrality
// and names; rows as merged sparse terms with bounds.

struct Term {
  int col;
  double coef;
};

struct Row {
  std::string name;
  std::vector<Term> terms;  // sorted by column, no duplicates, no zeros
  double lo, hi;
};

class ModelBuilder {
 public:
  int AddCol(std::string name, double lo, double hi, double obj, bool integer) {
    names_.push_back(std::move(name));
    lo_.push_back(lo);
    hi_.push_back(hi);
    obj_.push_back(obj);
    integer_.push_back(integer);
    return static_cast<int>(lo_.size()) - 1;
  }
  void AddRow(std::string name, std::vector<Term> terms, double lo, double hi) {
    std::sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) { return a.col < b.col; });
    std::vector<Term> merged;
    for (const Term& t : terms) {
      if (!merged.empty() && merged.back().col == t.col) {
        merged.back().coef += t.coef;
      } else {
        merged.push_back(t);
      }
    }
    std::erase_if(merged, [](const Term& t) { return t.coef == 0.0; });
    rows_.push_back(Row{std::move(name), std::move(merged), lo, hi});
  }

  int num_cols() const { return static_cast<int>(lo_.size()); }
  int num_rows() const { return static_cast<int>(rows_.size()); }
  const std::vector<Row>& rows() const { return rows_; }
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<double>& lo() const { return lo_; }
  const std::vector<double>& hi() const { return hi_; }
  const std::vector<double>& obj() const { return obj_; }
  void SetObjective(int col, double coef) { obj_[col] = coef; }
  // CBC's integrality tolerance for this model (0: CBC's default, 1e-6). A
  // big-M model whose solution is re-timed exactly sets it lower, so that
  // a binary at 1 − 1e-7 does not relax a row by M × 1e-7.
  double integer_tolerance = 0;
  const std::vector<bool>& integer() const { return integer_; }

  // Largest violation of a row or a bound by `x`, relative to the size of
  // the terms involved (max(1, |rhs|, Σ|a_j x_j|)), so big-M rows do not
  // count rounding as violation.
  double MaxViolation(const std::vector<double>& x) const {
    double worst = 0;
    for (int j = 0; j < num_cols(); ++j) {
      worst = std::max(worst, (lo_[j] - x[j]) / std::max(1.0, std::fabs(lo_[j])));
      if (hi_[j] < kLpInf) worst = std::max(worst, (x[j] - hi_[j]) / std::max(1.0, std::fabs(hi_[j])));
      if (integer_[j]) worst = std::max(worst, std::fabs(x[j] - std::round(x[j])));
    }
    for (const Row& r : rows_) {
      double a = 0, size = 1;
      for (const Term& t : r.terms) {
        a += t.coef * x[t.col];
        size += std::fabs(t.coef * x[t.col]);
      }
      if (r.lo > -kLpInf) worst = std::max(worst, (r.lo - a) / std::max(size, std::fabs(r.lo)));
      if (r.hi < kLpInf) worst = std::max(worst, (a - r.hi) / std::max(size, std::fabs(r.hi)));
    }
    return worst;
  }

 private:
  std::vector<std::string> names_;
  std::vector<double> lo_, hi_, obj_;
  std::vector<bool> integer_;
  std::vector<Row> rows_;
};

// The formulation.

struct TransferVar {
  int p, q;  // source PU, target PU
  int col;
  double us;  // transfer time when u runs on p and v on q
};

struct IlpModel {
  ModelBuilder mb;
  std::vector<std::vector<int>> cand;       // cand[v]: PUs v may run on
  std::vector<std::vector<int>> x;          // x[v][p]: column, -1 when v cannot run on p
  std::vector<int> s;                       // s[v]
  int makespan = -1;                        // T
  std::vector<int> z;                       // z[e] (two PUs, symmetric transfer) or -1
  std::vector<double> z_us;                 // the transfer z[e] pays
  std::vector<std::vector<TransferVar>> y;  // per edge, otherwise
  struct Pair {
    int u, v, col;
  };
  std::vector<Pair> pairs;  // ordering binaries o_{u,v}, u < v
  double big_m = 0;
};

// The candidate PUs of v: supported, and on a spatial PU fitting its capacity alone.
std::vector<std::vector<int>> Candidates(const CostModel& c);

IlpModel BuildModel(const Problem& pr);

// The full model solution of a list schedule of `assignment` dispatched in
// `order`: x, s, T, z/y and o (o_{u,v} = 1 iff u was dispatched before v,
// which on a shared serial PU means u ran first).
std::vector<double> ModelValues(const Problem& pr, const IlpModel& m, const std::vector<int>& assignment,
                                const std::vector<int>& order, const Schedule& schedule);

}  // namespace hetplan::mip_internal
