// Quantiles of Student's t distribution, for confidence intervals on a few batch means.
#pragma once

namespace sat::measure {

// The 0.975 quantile of Student's t with `dof` degrees of freedom: the multiplier of the standard error for a
// two-sided 95% confidence interval. Exact to three decimals for dof 1..30 (table); beyond, a Cornish-Fisher
// expansion around the normal quantile 1.96 (error under 1e-4). dof < 1 has no finite interval: +infinity.
double StudentT975(int dof);

// The 0.95 quantile, the same way: the multiplier for a one-sided 95% bound (or a two-sided 90% interval).
double StudentT95(int dof);

}  // namespace sat::measure
