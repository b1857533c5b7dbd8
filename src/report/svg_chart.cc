#include "report/svg_chart.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "report/page.h"

namespace sat::report {
namespace {

constexpr int kLeft = 62, kTop = 34, kBottom = 44, kRightWithAxis = 58, kRightWithout = 16;

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

// Maps data values to pixels along one axis.
struct Scale {
  double lo = 0, hi = 1;  // data (log2 of it for a log axis)
  double p0 = 0, p1 = 1;  // pixels
  bool log2 = false;
  double operator()(double v) const {
    double d = log2 ? std::log2(std::max(v, 1e-12)) : v;
    return hi == lo ? (p0 + p1) / 2 : p0 + (d - lo) / (hi - lo) * (p1 - p0);
  }
};

Scale YScale(const Axis& axis, const Range& data, double p0, double p1, std::vector<double>* ticks) {
  double lo = axis.min.value_or(std::min(0.0, data.empty() ? 0.0 : data.lo));
  double hi = axis.max.value_or(data.empty() ? 1.0 : data.hi * 1.08);
  if (hi <= lo) hi = lo + 1;
  *ticks = NiceTicks(lo, hi, 5);
  if (!axis.max && !ticks->empty()) hi = std::max(hi, ticks->back());
  return {lo, hi, p0, p1, false};
}

}  // namespace

std::vector<double> NiceTicks(double lo, double hi, int max_ticks) {
  if (!(hi > lo) || max_ticks < 1) return {lo};
  double raw = (hi - lo) / max_ticks;
  double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double f : {1.0, 2.0, 5.0, 10.0}) {
    step = f * mag;
    if (step >= raw) break;
  }
  std::vector<double> out;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  if (!out.empty() && out.back() < hi - step * 1e-9) out.push_back(out.back() + step);
  return out;
}

std::string TickText(double v) {
  double a = std::fabs(v);
  if (a >= 1e6) return fmt::format("{:g}M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:g}k", v / 1e3);
  if (a >= 100 || v == std::floor(v)) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

std::vector<std::pair<double, double>> ThinToPixelColumns(const std::vector<std::pair<double, double>>& pixels) {
  std::vector<std::pair<double, double>> out;
  out.reserve(pixels.size());
  size_t i = 0;
  while (i < pixels.size()) {
    const auto& [x0, y0] = pixels[i];
    if (!std::isfinite(x0) || !std::isfinite(y0)) {
      out.push_back(pixels[i++]);
      continue;
    }
    // The run of points in x0's column: [i, j).
    const double column = std::floor(x0);
    size_t j = i + 1, low = i, high = i;
    for (; j < pixels.size(); ++j) {
      const auto& [x, y] = pixels[j];
      if (!std::isfinite(x) || !std::isfinite(y) || std::floor(x) != column) break;
      if (y < pixels[low].second) low = j;
      if (y > pixels[high].second) high = j;
    }
    // First, lowest and highest in the order they came, last; each once.
    size_t keep[4] = {i, std::min(low, high), std::max(low, high), j - 1};
    for (size_t k = 0; k < 4; ++k) {
      if (k == 0 || keep[k] != keep[k - 1]) out.push_back(pixels[keep[k]]);
    }
    i = j;
  }
  return out;
}

std::string RenderSvg(const Chart& c) {
  const int right = c.y2 ? kRightWithAxis : kRightWithout;
  const double px0 = kLeft, px1 = c.width - right, py0 = c.height - kBottom, py1 = kTop;

  // Data ranges per axis.
  Range xr, yr, y2r;
  for (const auto& s : c.series) {
    for (const auto& [x, y] : s.points) {
      xr.Add(x);
      (s.right_axis ? y2r : yr).Add(y);
    }
  }
  for (const auto& l : c.lines) (l.right_axis ? y2r : yr).Add(l.y);
  for (const auto& b : c.bands) {
    xr.Add(b.x0);
    xr.Add(b.x1);
  }
  for (const auto& f : c.failures) xr.Add(f.x);
  for (const auto& [x, label] : c.x_labels) xr.Add(x);

  // The x axis: categorical labels, powers of two, or round numbers.
  Scale sx;
  sx.log2 = c.x.log2;
  sx.p0 = px0;
  sx.p1 = px1;
  std::vector<std::pair<double, std::string>> xticks;
  bool bars = std::any_of(c.series.begin(), c.series.end(), [](const Series& s) { return s.style == SeriesStyle::kBars; });
  double xlo = c.x.min.value_or(xr.empty() ? 0 : xr.lo), xhi = c.x.max.value_or(xr.empty() ? 1 : xr.hi);
  if (c.x.log2) {
    xlo = std::max(xlo, 1e-12);
    xhi = std::max(xhi, xlo);
    sx.lo = std::log2(xlo) - 0.3;
    sx.hi = std::log2(xhi) + 0.3;
    for (double p = std::exp2(std::ceil(std::log2(xlo))); p <= xhi * 1.0001; p *= 2) xticks.emplace_back(p, TickText(p));
  } else {
    double pad = bars || !c.x_labels.empty() ? 0.6 : (xhi - xlo) * 0.04 + (xhi == xlo ? 0.5 : 0);
    sx.lo = xlo - pad;
    sx.hi = xhi + pad;
    if (!c.x_labels.empty()) {
      xticks = c.x_labels;
    } else {
      for (double t : NiceTicks(xlo, xhi, 8))
        if (t >= sx.lo && t <= sx.hi && (!c.x.integer || t == std::floor(t))) xticks.emplace_back(t, TickText(t));
    }
  }
  std::vector<double> yticks, y2ticks;
  Scale sy = YScale(c.y, yr, py0, py1, &yticks);
  Scale sy2 = c.y2 ? YScale(*c.y2, y2r, py0, py1, &y2ticks) : sy;

  std::string o = fmt::format(
      "<svg class=\"chart\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\" "
      "aria-label=\"{2}\" font-family=\"sans-serif\" font-size=\"11\">\n",
      c.width, c.height, XmlEscape(c.title));
  o += fmt::format("<text x=\"{}\" y=\"16\" font-size=\"13\" font-weight=\"bold\">{}</text>\n", kLeft,
                   XmlEscape(c.title));

  // Shaded ranges, grid and axes first, so data draws on top.
  for (const auto& b : c.bands) {
    double x0 = std::clamp(sx(b.x0), px0, px1), x1 = std::clamp(sx(b.x1), px0, px1);
    o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" opacity=\"0.35\"/>\n",
                     x0, py1, std::max(0.0, x1 - x0), py0 - py1, b.color);
    if (!b.label.empty() && x1 - x0 >= 6.5 * static_cast<double>(b.label.size()) + 4)  // only where it fits
      o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#555\">{}</text>\n", x0 + 3, py1 + 12, XmlEscape(b.label));
  }
  for (double t : yticks) {
    double y = sy(t);
    o += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e3e3e3\"/>\n", px0, y, px1, y);
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"#333\">{}</text>\n", px0 - 6, y + 4,
                     TickText(t));
  }
  for (double t : y2ticks) {
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#333\">{}</text>\n", px1 + 6, sy2(t) + 4, TickText(t));
  }
  for (const auto& [x, label] : xticks) {
    double px = sx(x);
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#999\"/>\n", px, py0, py0 + 4);
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#333\">{}</text>\n", px, py0 + 16,
                     XmlEscape(label));
  }
  o += fmt::format("<polyline points=\"{0:.1f},{1:.1f} {0:.1f},{2:.1f} {3:.1f},{2:.1f}{4}\" fill=\"none\" "
                   "stroke=\"#666\"/>\n",
                   px0, py1, py0, px1, c.y2 ? fmt::format(" {:.1f},{:.1f}", px1, py1) : "");
  o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" fill=\"#333\">{}</text>\n", (px0 + px1) / 2,
                   c.height - 8, XmlEscape(c.x.label));
  o += fmt::format("<text transform=\"translate(14,{:.1f}) rotate(-90)\" text-anchor=\"middle\" fill=\"#333\">{}</text>\n",
                   (py0 + py1) / 2, XmlEscape(c.y.label));
  if (c.y2)
    o += fmt::format("<text transform=\"translate({},{:.1f}) rotate(90)\" text-anchor=\"middle\" fill=\"#333\">{}</text>\n",
                     c.width - 10, (py0 + py1) / 2, XmlEscape(c.y2->label));

  // Data.
  size_t bar_series = 0, bar_index = 0;
  for (const auto& s : c.series) bar_series += s.style == SeriesStyle::kBars;
  for (const auto& s : c.series) {
    const Scale& y = s.right_axis ? sy2 : sy;
    std::string dash = s.dashed ? " stroke-dasharray=\"5,4\"" : "";
    if (s.style == SeriesStyle::kBars) {
      double slot = (sx(1) - sx(0)) * 0.7 / static_cast<double>(bar_series);
      for (const auto& [x, v] : s.points) {
        double left = sx(x) - slot * static_cast<double>(bar_series) / 2 + slot * static_cast<double>(bar_index);
        double top = y(std::max(0.0, v)), base = y(0);
        o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}: {}</title></rect>\n",
                         left, top, std::max(1.0, slot - 1), std::max(0.0, base - top), s.color, XmlEscape(s.name),
                         TickText(v));
      }
      ++bar_index;
      continue;
    }
    if (s.style != SeriesStyle::kPoints && s.points.size() > 1) {
      std::vector<std::pair<double, double>> pixels;
      pixels.reserve(s.points.size());
      for (const auto& [x, v] : s.points) pixels.emplace_back(sx(x), y(v));
      std::string pts;
      for (const auto& [px, py] : ThinToPixelColumns(pixels)) pts += fmt::format("{:.1f},{:.1f} ", px, py);
      o += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", pts, s.color, dash);
    }
    if (s.style != SeriesStyle::kLine) {
      for (const auto& [x, v] : s.points)
        o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{}: {} at {}</title></circle>\n",
                         sx(x), y(v), s.color, XmlEscape(s.name), TickText(v), TickText(x));
    }
  }
  for (const auto& l : c.lines) {
    double y = (l.right_axis ? sy2 : sy)(l.y);
    o += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"1.5\" "
                     "stroke-dasharray=\"6,4\"/>\n",
                     px0, y, px1, y, l.color);
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"{}\">{}</text>\n", px1 - 4, y - 4,
                     l.color, XmlEscape(l.label));
  }
  // Failure marks; labels of marks close together are stacked so they stay readable.
  std::vector<FailMark> marks = c.failures;
  std::sort(marks.begin(), marks.end(), [](const FailMark& a, const FailMark& b) { return a.x < b.x; });
  double last_label_x = -1e9;
  int level = 0;
  for (const auto& f : marks) {
    double x = sx(f.x), y = py0 - 8;
    level = x - last_label_x < 28 ? (level + 1) % 4 : 0;
    last_label_x = x;
    o += fmt::format("<path d=\"M{:.1f},{:.1f} l8,8 m0,-8 l-8,8\" stroke=\"#c0392b\" stroke-width=\"2.5\"><title>{}</title></path>\n",
                     x - 4, y - 4, XmlEscape(f.label));
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#c0392b\">{}</text>\n", x,
                     y - 8 - 11 * level, XmlEscape(f.label));
  }

  // Legend along the top.
  double lx = px0 + 4;
  for (const auto& s : c.series) {
    if (s.name.empty()) continue;
    o += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/>\n", lx, kTop - 12, s.color);
    o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" fill=\"#333\">{}</text>\n", lx + 14, kTop - 3, XmlEscape(s.name));
    lx += 24 + 6.2 * static_cast<double>(s.name.size());
  }
  o += "</svg>\n";
  return o;
}

}  // namespace sat::report
