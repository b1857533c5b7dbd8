#include "sweep/helper_metrics.h"

#include <gtest/gtest.h>

namespace sat::sweep {
namespace {

measure::HelperMessage Message(measure::MessageType type, int64_t steps, std::map<std::string, double> metrics) {
  measure::HelperMessage m;
  m.type = type;
  m.steps = steps;
  m.metrics = std::move(metrics);
  return m;
}

TEST(HelperMetrics, MetricsMessagesArePointsAndReportsRecoverDroppedOnes) {
  HelperMetrics helper;
  MetricLog log(MetricSpec{"loss", Goal::kMinimize, std::nullopt});
  for (MetricPoint& p : helper.Add(Message(measure::MessageType::kMetrics, 10, {{"loss", 0.5}}), 1.0)) {
    EXPECT_EQ(p.step, 10);
    log.Add(std::move(p));
  }
  // A progress report carries a newer value whose metrics datagram never arrived.
  EXPECT_TRUE(helper.Add(Message(measure::MessageType::kProgress, 20, {{"loss", 0.4}, {"acc", 0.9}}), 2.0).empty());
  const std::vector<MetricPoint> missing = helper.Missing(log, 3.0);
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(missing[0].name, "acc");
  EXPECT_EQ(missing[1].name, "loss");
  EXPECT_EQ(missing[1].value, 0.4);
  EXPECT_EQ(missing[1].step, 20);
  for (const MetricPoint& p : missing) log.Add(p);
  EXPECT_TRUE(helper.Missing(log, 4.0).empty());
}

}  // namespace
}  // namespace sat::sweep
