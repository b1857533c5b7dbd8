#include "measure/student_t.h"

#include <array>
#include <limits>

namespace sat::measure {
namespace {

using Table = std::array<double, 30>;  // dof 1..30

// Cornish-Fisher: t = z + g1(z)/v + g2(z)/v^2 + g3(z)/v^3 with z the normal quantile.
double CornishFisher(double z, int dof) {
  const double z2 = z * z;
  const double v = dof;
  const double g1 = z * (z2 + 1) / 4;
  const double g2 = z * ((5 * z2 + 16) * z2 + 3) / 96;
  const double g3 = z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / 384;
  return z + g1 / v + g2 / (v * v) + g3 / (v * v * v);
}

double Quantile(const Table& table, double z, int dof) {
  if (dof < 1) return std::numeric_limits<double>::infinity();
  if (dof <= static_cast<int>(table.size())) return table[dof - 1];
  return CornishFisher(z, dof);
}

}  // namespace

double StudentT975(int dof) {
  static constexpr Table kTable = {
      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,  // 1..10
      2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,  // 11..20
      2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,  // 21..30
  };
  return Quantile(kTable, 1.959963984540054, dof);
}

double StudentT95(int dof) {
  static constexpr Table kTable = {
      6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812,  // 1..10
      1.796, 1.782, 1.771, 1.761, 1.753, 1.746, 1.740, 1.734, 1.729, 1.725,  // 11..20
      1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697,  // 21..30
  };
  return Quantile(kTable, 1.6448536269514722, dof);
}

}  // namespace sat::measure
