#include "monitor/query.h"

#include <gtest/gtest.h>

#include "monitor/test_samples.h"

namespace sat::monitor {
namespace {

std::vector<std::string> Names(const Query& q) {
  std::vector<std::string> out;
  for (const Column& c : q.columns) out.push_back(c.name);
  return out;
}

// The message of the usage error ParseQuery gives, or "ok".
std::string ErrorOf(std::string_view gpu_fields, std::string_view host_fields, bool has_tree = false) {
  Result<Query> q = ParseQuery(gpu_fields, host_fields, has_tree);
  if (q) return "ok";
  EXPECT_EQ(q.error().exit_code, kExitUsage) << q.error().message;
  return q.error().message;
}

TEST(ParseQuery, SpacesAroundCommasAreIgnoredAndGpuColumnsComeFirst) {
  Result<Query> q = ParseQuery(" index , utilization.gpu,memory.used ", "cpu.util ,  mem.used", false);
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_EQ(Names(*q), (std::vector<std::string>{"index", "utilization.gpu", "memory.used", "cpu.util", "mem.used"}));
  EXPECT_TRUE(q->per_gpu);
}

TEST(ParseQuery, ColumnsKeepTheNameAsTyped) {
  Result<Query> q = ParseQuery("clocks.sm,gpu_name", "", false);
  ASSERT_TRUE(q);
  EXPECT_EQ(Names(*q), (std::vector<std::string>{"clocks.sm", "gpu_name"}));
  EXPECT_EQ(q->columns[0].field, FindField("clocks.current.sm"));
}

TEST(ParseQuery, UnknownFieldNamesTheClosestValidName) {
  EXPECT_EQ(ErrorOf("index,utilisation.gpu", ""),
            "unknown field 'utilisation.gpu' in --query-gpu; did you mean 'utilization.gpu'?");
  EXPECT_EQ(ErrorOf("", "cpu.utl"), "unknown field 'cpu.utl' in --query-host; did you mean 'cpu.util'?");
  EXPECT_EQ(ErrorOf("completely.different.thing", ""), "unknown field 'completely.different.thing' in --query-gpu");
}

TEST(ParseQuery, FieldsInTheWrongOptionSayWhereTheyBelong) {
  EXPECT_EQ(ErrorOf("cpu.util", ""), "'cpu.util' is a host field; query it with --query-host, not --query-gpu");
  EXPECT_EQ(ErrorOf("", "power.draw"), "'power.draw' is a GPU field; query it with --query-gpu, not --query-host");
  EXPECT_EQ(ErrorOf("proc.rss", "", true),
            "'proc.rss' is a process tree field; query it with --query-host, not --query-gpu");
}

TEST(ParseQuery, ProcessFieldsNeedAWatchedTree) {
  EXPECT_EQ(ErrorOf("", "proc.cpu"), "'proc.cpu' needs a watched process tree (give --pid PID, or a command after --)");
  Result<Query> with = ParseQuery("", "proc.cpu,proc.rss", true);
  ASSERT_TRUE(with);
  EXPECT_FALSE(with->per_gpu);
}

TEST(ParseQuery, TimestampIsAllowedInEitherList) {
  EXPECT_TRUE(ParseQuery("timestamp,index", "", false));
  Result<Query> host = ParseQuery("", "timestamp,cpu.util", false);
  ASSERT_TRUE(host);
  EXPECT_FALSE(host->per_gpu);
}

TEST(ParseQuery, EmptyNamesAreErrorsButEmptyListsAreNot) {
  EXPECT_EQ(ErrorOf("index,,name", ""), "empty field name in --query-gpu 'index,,name'");
  Result<Query> none = ParseQuery("", "  ", false);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

using GpuRows = std::vector<const telemetry::GpuSample*>;

// The GPU of each row the query forms from the sample.
GpuRows RowGpus(std::string_view gpu_fields, const telemetry::Sample& s) {
  Result<Query> q = ParseQuery(gpu_fields, "cpu.util", false);
  EXPECT_TRUE(q);
  GpuRows gpus;
  if (q) {
    for (const Row& row : RowsOf(*q, s)) gpus.push_back(row.gpu);
  }
  return gpus;
}

TEST(RowsOf, OneRowPerGpuWhenAGpuFieldIsQueried) {
  telemetry::Sample s = testing::TwoGpuSample();
  EXPECT_EQ(RowGpus("index", s), (GpuRows{&s.gpus[0], &s.gpus[1]}));
}

TEST(RowsOf, OneRowPerSampleWithoutGpuFields) {
  telemetry::Sample s = testing::TwoGpuSample();
  EXPECT_EQ(RowGpus("timestamp", s), (GpuRows{nullptr}));
  EXPECT_EQ(RowGpus("", s), (GpuRows{nullptr}));
}

TEST(RowsOf, PerGpuQueryWithoutGpusGivesNoRows) {
  telemetry::Sample s = testing::IdleSample();
  s.gpus.clear();
  EXPECT_EQ(RowGpus("index", s), GpuRows{});
  Result<Query> host_only = ParseQuery("", "mem.total", false);
  ASSERT_TRUE(host_only);
  EXPECT_EQ(RowsOf(*host_only, s).size(), 1u) << "host fields keep their row without a GPU";
}

}  // namespace
}  // namespace sat::monitor
