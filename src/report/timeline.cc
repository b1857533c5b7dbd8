#include "report/timeline.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "report/page.h"
#include "report/svg_chart.h"

namespace sat::report {
namespace {

constexpr int kLabelWidth = 96, kRight = 14, kTop = 40, kBottom = 40, kRowHeight = 14, kLaneGap = 6;

// The lanes in order, with any lane a bar names that Timeline::lanes lacks added at the end.
std::vector<std::string> AllLanes(const Timeline& t) {
  std::vector<std::string> lanes = t.lanes;
  for (const TimelineBar& b : t.bars) {
    if (std::find(lanes.begin(), lanes.end(), b.lane) == lanes.end()) lanes.push_back(b.lane);
  }
  return lanes;
}

// Each bar's row within its lane (first row free at its start), and each lane's row count.
struct Layout {
  std::vector<std::string> lanes;
  std::vector<size_t> lane_of;  // per bar
  std::vector<int> row_of;      // per bar
  std::vector<int> rows;        // per lane
};

Layout Arrange(const Timeline& t) {
  Layout l;
  l.lanes = AllLanes(t);
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < l.lanes.size(); ++i) index.emplace(l.lanes[i], i);
  l.lane_of.resize(t.bars.size());
  l.row_of.resize(t.bars.size());
  l.rows.assign(l.lanes.size(), 1);
  std::vector<size_t> order(t.bars.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return t.bars[a].start < t.bars[b].start; });
  std::vector<std::vector<double>> row_end(l.lanes.size());  // per lane, per row: when its last bar ends
  for (size_t i : order) {
    const TimelineBar& b = t.bars[i];
    const size_t lane = index.at(b.lane);
    const double end = std::max(b.start, b.end);
    std::vector<double>& ends = row_end[lane];
    auto free = std::find_if(ends.begin(), ends.end(), [&](double e) { return e <= b.start; });
    if (free == ends.end()) free = ends.insert(ends.end(), end);
    else *free = end;
    l.lane_of[i] = lane;
    l.row_of[i] = static_cast<int>(free - ends.begin());
    l.rows[lane] = std::max(l.rows[lane], static_cast<int>(ends.size()));
  }
  return l;
}

}  // namespace

std::vector<int> LaneRows(const Timeline& t) { return Arrange(t).rows; }

std::string RenderTimeline(const Timeline& t) {
  const Layout l = Arrange(t);
  std::vector<int> lane_top(l.lanes.size());
  int y = kTop;
  for (size_t i = 0; i < l.lanes.size(); ++i) {
    lane_top[i] = y;
    y += l.rows[i] * kRowHeight + kLaneGap;
  }
  const int plot_bottom = std::max(y, kTop + kRowHeight);
  const int height = plot_bottom + kBottom;
  double lo = 0, hi = 1;
  for (const TimelineBar& b : t.bars) hi = std::max({hi, b.start, b.end});
  for (const TimelineBar& b : t.bars) lo = std::min(lo, b.start);
  const double px0 = kLabelWidth, px1 = t.width - kRight;
  auto sx = [&](double v) { return px0 + (v - lo) / (hi - lo) * (px1 - px0); };

  std::string o = fmt::format(
      "<svg class=\"chart timeline\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\" "
      "aria-label=\"{2}\" font-family=\"sans-serif\" font-size=\"11\">\n",
      t.width, height, XmlEscape(t.title));
  o += fmt::format("<text x=\"4\" y=\"16\" font-size=\"13\" font-weight=\"bold\">{}</text>\n", XmlEscape(t.title));
  double lx = px0;
  for (const LegendItem& item : t.legend) {
    o += fmt::format("<rect x=\"{:.1f}\" y=\"22\" width=\"10\" height=\"10\" fill=\"{}\"/>", lx, item.color);
    o += fmt::format("<text x=\"{:.1f}\" y=\"31\" fill=\"#333\">{}</text>\n", lx + 14, XmlEscape(item.label));
    lx += 24 + 6.2 * static_cast<double>(item.label.size());
  }
  // Lanes: a shaded band each, its name at the left.
  for (size_t i = 0; i < l.lanes.size(); ++i) {
    const int h = l.rows[i] * kRowHeight;
    o += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>\n", px0, lane_top[i],
                     px1 - px0, h, i % 2 ? "#fafafa" : "#f0f3f6");
    o += fmt::format("<text class=\"lane\" x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#333\">{}</text>\n",
                     kLabelWidth - 6, lane_top[i] + std::min(h, kRowHeight) - 3, XmlEscape(l.lanes[i]));
  }
  // The time axis.
  for (double tick : NiceTicks(lo, hi, 8)) {
    if (tick > hi * 1.0001) continue;
    const double x = sx(tick);
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>\n", x, kTop, plot_bottom);
    o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" fill=\"#333\">{}</text>\n", x,
                     plot_bottom + 14, TickText(tick));
  }
  o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" fill=\"#333\">{}</text>\n", (px0 + px1) / 2,
                   height - 8, XmlEscape(t.x_label));
  // Bars.
  for (size_t i = 0; i < t.bars.size(); ++i) {
    const TimelineBar& b = t.bars[i];
    const double x0 = sx(b.start), x1 = sx(std::max(b.start, b.end));
    const double w = std::max(1.5, x1 - x0);
    const int top = lane_top[l.lane_of[i]] + l.row_of[i] * kRowHeight + 1;
    o += fmt::format("<rect class=\"bar{}{}\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"{}>"
                     "<title>{}</title></rect>\n",
                     b.css_class.empty() ? "" : " ", XmlEscape(b.css_class), x0, top, w, kRowHeight - 2, b.color,
                     b.open ? " stroke=\"#333\" stroke-dasharray=\"3,2\"" : "", XmlEscape(b.tooltip));
    if (!b.label.empty() && w >= 6.5 * static_cast<double>(b.label.size()) + 4) {
      o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" fill=\"#fff\" font-size=\"10\" pointer-events=\"none\">{}</text>\n",
                       x0 + 2, top + kRowHeight - 5, XmlEscape(b.label));
    }
  }
  return o + "</svg>\n";
}

}  // namespace sat::report
