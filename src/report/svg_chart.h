// Small charts as inline SVG text, for the report pages (report/page.h): lines, points and bars on a linear or log2
// x axis, an optional right-hand axis, reference lines, shaded x ranges and failure marks. No scripts, no external
// resources. The <svg> carries width, height and a viewBox, so the page's style scales it down to a narrow window
// and to paper. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sat::report {

struct Axis {
  std::string label;
  bool log2 = false;                 // x only: positions by log2, ticks at powers of two
  bool integer = false;              // x only: ticks at whole numbers only (counts)
  std::optional<double> min, max;    // fixed ends; else from the data (y axes start at 0)
};

enum class SeriesStyle { kLinePoints, kLine, kPoints, kBars };

struct Series {
  std::string name;  // in the legend; empty: not listed
  std::string color;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in the order given
  SeriesStyle style = SeriesStyle::kLinePoints;
  bool right_axis = false;  // against Chart::y2
  bool dashed = false;
};

struct RefLine {  // horizontal, at y on the left axis (or the right one)
  double y = 0;
  std::string label, color;
  bool right_axis = false;
};

struct Band {  // a shaded x range
  double x0 = 0, x1 = 0;
  std::string label, color;
};

struct FailMark {  // a red cross on the x axis where a trial failed
  double x = 0;
  std::string label;
};

struct Chart {
  std::string title;
  int width = 560, height = 300;
  Axis x, y;
  std::optional<Axis> y2;
  std::vector<Series> series;
  std::vector<RefLine> lines;
  std::vector<Band> bands;
  std::vector<FailMark> failures;
  std::vector<std::pair<double, std::string>> x_labels;  // categorical x: label at each x instead of numeric ticks
};

// Up to about `max_ticks` round tick values (1, 2, 5 times a power of ten) covering lo..hi.
std::vector<double> NiceTicks(double lo, double hi, int max_ticks);

// Tick text: "1.2k", "850", "0.25".
std::string TickText(double v);

// A line's points in pixels, thinned where it draws the same: of each run of consecutive points in one pixel
// column, only the first, the lowest, the highest and the last are kept (in their order), so a series of thousands
// of points draws as before with a few per column. A point that is not finite ends a run and is kept.
std::vector<std::pair<double, double>> ThinToPixelColumns(const std::vector<std::pair<double, double>>& pixels);

// The chart as one <svg> element (width and height in CSS pixels).
std::string RenderSvg(const Chart& chart);

}  // namespace sat::report
