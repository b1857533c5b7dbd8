#include "report/svg_chart.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace sat::report {
namespace {

using ::testing::HasSubstr;

TEST(SvgChart, NiceTicks) {
  EXPECT_EQ(NiceTicks(0, 1000, 5), (std::vector<double>{0, 200, 400, 600, 800, 1000}));
  EXPECT_EQ(NiceTicks(0, 7, 5), (std::vector<double>{0, 2, 4, 6, 8}));
  EXPECT_EQ(NiceTicks(0, 0.9, 4), (std::vector<double>{0, 0.5, 1}));
  EXPECT_EQ(NiceTicks(3, 3, 5), (std::vector<double>{3}));
}

TEST(SvgChart, TickText) {
  EXPECT_EQ(TickText(0), "0");
  EXPECT_EQ(TickText(850), "850");
  EXPECT_EQ(TickText(12000), "12k");
  EXPECT_EQ(TickText(2500000), "2.5M");
  EXPECT_EQ(TickText(0.25), "0.25");
  EXPECT_EQ(TickText(5.49954), "5.5");
}

TEST(SvgChart, DrawsSeriesLinesBandsAndFailures) {
  Chart c;
  c.title = "Throughput <vs> batch";
  c.x.label = "batch size";
  c.x.log2 = true;
  c.y.label = "samples/s";
  c.y2 = Axis{.label = "memory %", .min = 0.0, .max = 100.0};
  c.series.push_back({"throughput", "#00f", {{16, 100}, {32, 180}, {64, 240}}, SeriesStyle::kLinePoints});
  c.series.push_back({"memory", "#f80", {{16, 10}, {32, 20}, {64, 40}}, SeriesStyle::kLinePoints, true});
  c.lines.push_back({90, "target", "#888", true});
  c.bands.push_back({0, 1, "warm-up", "#fd0"});
  c.failures.push_back({128, "OOM"});
  std::string svg = RenderSvg(c);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_THAT(svg, HasSubstr("</svg>"));
  EXPECT_THAT(svg, HasSubstr("Throughput &lt;vs&gt; batch"));
  EXPECT_THAT(svg, HasSubstr("<polyline"));
  EXPECT_THAT(svg, HasSubstr("<circle"));
  EXPECT_THAT(svg, HasSubstr(">OOM</text>"));
  EXPECT_THAT(svg, HasSubstr(">target</text>"));
  // Powers of two on a log2 axis.
  for (const char* tick : {">16</text>", ">32</text>", ">64</text>", ">128</text>"}) EXPECT_THAT(svg, HasSubstr(tick));
}

TEST(SvgChart, IntegerAxisHasWholeTicksOnly) {
  Chart c;
  c.title = "workers";
  c.x.integer = true;
  c.series.push_back({"loader", "#00f", {{0, 10}, {1, 12}, {2, 20}}});
  std::string svg = RenderSvg(c);
  EXPECT_THAT(svg, HasSubstr(">1</text>"));
  EXPECT_THAT(svg, ::testing::Not(HasSubstr(">0.5</text>")));
}

TEST(SvgChart, BarsOnCategoricalAxis) {
  Chart c;
  c.title = "per trial";
  c.series.push_back({"rate", "#00f", {{1, 10}, {2, 20}}, SeriesStyle::kBars});
  c.x_labels = {{1, "1l"}, {2, "2f"}};
  std::string svg = RenderSvg(c);
  EXPECT_THAT(svg, HasSubstr("<rect"));
  EXPECT_THAT(svg, HasSubstr(">1l</text>"));
  EXPECT_THAT(svg, HasSubstr(">2f</text>"));
}

TEST(SvgChart, EmptyChartStillRenders) {
  Chart c;
  c.title = "nothing";
  std::string svg = RenderSvg(c);
  EXPECT_THAT(svg, HasSubstr("nothing"));
  EXPECT_THAT(svg, ::testing::Not(HasSubstr("nan")));
  EXPECT_THAT(svg, ::testing::Not(HasSubstr("inf")));
}

TEST(SvgChart, ALineKeepsEachPixelColumnsFirstLowestHighestAndLast) {
  using P = std::pair<double, double>;
  // Column 10: five points; column 11: one; then a point that is not finite, and column 11 again.
  std::vector<P> pixels = {{10.1, 5}, {10.3, 9}, {10.5, 1}, {10.7, 4}, {10.9, 6}, {11.2, 3},
                           {11.5, std::nan("")}, {11.6, 2}, {11.8, 2}};
  std::vector<P> thin = ThinToPixelColumns(pixels);
  ASSERT_EQ(thin.size(), 8u);
  EXPECT_EQ(thin[0], P(10.1, 5));  // first
  EXPECT_EQ(thin[1], P(10.3, 9));  // highest, before the lowest
  EXPECT_EQ(thin[2], P(10.5, 1));  // lowest
  EXPECT_EQ(thin[3], P(10.9, 6));  // last
  EXPECT_EQ(thin[4], P(11.2, 3));  // a column of one point, once
  EXPECT_TRUE(std::isnan(thin[5].second));
  EXPECT_EQ(thin[6], P(11.6, 2));  // first, lowest and highest at once
  EXPECT_EQ(thin[7], P(11.8, 2));  // last
  EXPECT_EQ(ThinToPixelColumns({}).size(), 0u);
}

TEST(SvgChart, AThousandsOfPointsLineStaysAFewPointsAPixel) {
  Chart c;
  c.title = "long";
  c.width = 400;
  Series s{"rate", "#00f", {}, SeriesStyle::kLine};
  for (int i = 0; i < 20000; ++i) s.points.emplace_back(i, (i * 7919) % 100);
  c.series.push_back(s);
  std::string svg = RenderSvg(c);
  // The data line is the last polyline; its points are pairs separated by spaces.
  size_t at = svg.rfind("<polyline points=\"");
  ASSERT_NE(at, std::string::npos);
  std::string points = svg.substr(at, svg.find('"', at + 18) - at);
  size_t n = std::count(points.begin(), points.end(), ',');
  EXPECT_LE(n, 4u * 400u);
  EXPECT_GE(n, 300u);
}

}  // namespace
}  // namespace sat::report
