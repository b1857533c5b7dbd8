#include "measure/student_t.h"

#include <array>
#include <limits>

namespace sat::measure {

double StudentT975(int dof) {
  static constexpr std::array<double, 30> kTable = {
      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,  // 1..10
      2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,  // 11..20
      2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,  // 21..30
  };
  if (dof < 1) return std::numeric_limits<double>::infinity();
  if (dof <= static_cast<int>(kTable.size())) return kTable[dof - 1];
  // Cornish-Fisher: t = z + g1(z)/v + g2(z)/v^2 + g3(z)/v^3 with z the normal 0.975 quantile.
  const double z = 1.959963984540054;
  const double z2 = z * z;
  const double v = dof;
  const double g1 = z * (z2 + 1) / 4;
  const double g2 = z * ((5 * z2 + 16) * z2 + 3) / 96;
  const double g3 = z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / 384;
  return z + g1 / v + g2 / (v * v) + g3 / (v * v * v);
}

}  // namespace sat::measure
