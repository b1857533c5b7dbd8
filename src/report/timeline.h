// A timeline as inline SVG: one lane per device (a GPU, the CPU pool, a Slurm node), and a bar per piece of work
// on it from its start to its end, coloured by how it ended. Bars that overlap in time on one lane (runs packed
// together) are stacked in rows within the lane, so every bar stays visible; a lane is as tall as the most bars
// it held at once. Pure function; the result sits in a report page (report/page.h), inside Wide() when it is
// wider than a narrow window.
#pragma once

#include <string>
#include <vector>

namespace sat::report {

struct TimelineBar {
  std::string lane;   // a name in Timeline::lanes; bars of unknown lanes get a lane at the end
  double start = 0, end = 0;  // seconds on the timeline's axis; end < start is drawn as end == start
  std::string color;
  std::string label;      // drawn inside the bar when it fits (e.g. "#12")
  std::string tooltip;    // the bar's <title>: what a pointer over it shows
  std::string css_class;  // on the <rect>, after "bar": e.g. "done", "failed"
  bool open = false;      // still running: drawn with a dashed right edge
};

struct LegendItem {
  std::string label, color;
};

struct Timeline {
  std::string title;
  std::string x_label = "seconds";
  int width = 1100;
  std::vector<std::string> lanes;  // top to bottom
  std::vector<TimelineBar> bars;
  std::vector<LegendItem> legend;
};

// The timeline as one <svg class="chart timeline">; each bar a <rect class="bar CSS_CLASS"> with a <title>.
std::string RenderTimeline(const Timeline& timeline);

// How many rows each lane needs: the most bars on it at once (at least 1), by Timeline::lanes order.
std::vector<int> LaneRows(const Timeline& timeline);

}  // namespace sat::report
