//===- Tolerance.h - tolerances for nnx's numerical GoogleTests -*- C++ -*-===//
//
// The rule (test/README.md): a numerical test compares with a reference
// whose own error is bounded, either at the seeds' end-to-end contract
// (function preservation: atol = rtol = 1e-5, `withinContract`) or, for a
// kernel or a reduction, within a bound that grows with the reduction
// length (`gamma(n) * sum |terms|`, `withinBound`). NNX_TEST_REORDER=1 makes
// every reference reduction of `sum` run in another legitimate order (the
// terms in blocks of kBlock, the blocks last to first); the suite passes
// both ways. The Python twin is python/nnx/testing.py.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_UNITTESTS_SUPPORT_TOLERANCE_H
#define NNX_UNITTESTS_SUPPORT_TOLERANCE_H

#include "gtest/gtest.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace nnx::testing {

/// The seeds' end-to-end contract.
inline constexpr double kContractAtol = 1e-5, kContractRtol = 1e-5;
/// Unit roundoff of float32: fl(x) = x (1 + d), |d| <= kU32.
inline constexpr double kU32 = std::numeric_limits<float>::epsilon() / 2;
/// Block length of the reordered reductions.
inline constexpr size_t kBlock = 8;

/// Whether references reduce in the other order (NNX_TEST_REORDER=1).
inline bool reordered() {
  const char *v = std::getenv("NNX_TEST_REORDER");
  return v && *v && std::strcmp(v, "0") != 0;
}

/// Higham's gamma_n = n u / (1 - n u): the relative bound of an n-term sum
/// or dot product in float (u = kU32), in any order.
inline double gamma(size_t n, double u = kU32) {
  double nu = static_cast<double>(n) * u;
  return nu / (1 - nu);
}

/// The sum of term(i) for i in [0, n) in T, in index order, or under
/// NNX_TEST_REORDER in blocks of kBlock summed last block first.
template <typename T, typename Term> T sum(size_t n, Term term, T init = T(0)) {
  if (!reordered()) {
    T acc = init;
    for (size_t i = 0; i < n; ++i)
      acc += term(i);
    return acc;
  }
  T acc = init;
  for (size_t end = n; end > 0;) {
    size_t start = end > kBlock ? (end - 1) / kBlock * kBlock : 0;
    T block = T(0);
    for (size_t i = start; i < end; ++i)
      block += term(i);
    acc += block;
    end = start;
  }
  return acc;
}

/// |got - want| <= bound.
inline ::testing::AssertionResult withinBound(double got, double want,
                                              double bound) {
  double err = std::abs(got - want);
  if (err <= bound)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "got " << got << ", want " << want << ": error " << err
         << " > bound " << bound;
}

/// |got - want| <= atol + rtol |want|, the end-to-end contract.
inline ::testing::AssertionResult withinContract(double got, double want) {
  return withinBound(got, want, kContractAtol + kContractRtol * std::abs(want));
}

} // namespace nnx::testing

#endif // NNX_UNITTESTS_SUPPORT_TOLERANCE_H
