#include "report/pipes.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "report/page.h"

namespace sat::report {

namespace {
constexpr int kTube = 84, kThinnest = 6;  // pixels: the tallest pipe, and the least a measured one gets
}

std::string RenderPipes(const Pipeline& p) {
  double widest = 0;
  for (const Pipe& pipe : p.pipes) {
    if (pipe.rate && std::isfinite(*pipe.rate)) widest = std::max(widest, *pipe.rate);
  }
  std::string o = "<div class=\"pipes\">\n";
  for (size_t i = 0; i < p.pipes.size(); ++i) {
    const Pipe& pipe = p.pipes[i];
    const bool measured = pipe.rate && std::isfinite(*pipe.rate) && widest > 0;
    const bool narrow = p.narrowest && *p.narrowest == i;
    std::string cls = narrow ? "pipe narrowest" : measured ? "pipe" : "pipe unmeasured";
    // An unmeasured pipe is an outline of half the tube: present, but not as wide as anything measured.
    int h = measured ? std::max(kThinnest, static_cast<int>(std::lround(kTube * *pipe.rate / widest))) : kTube / 2;
    o += fmt::format("<div class=\"{}\"><div class=\"name\">{}{}</div>", cls, XmlEscape(pipe.name),
                     narrow ? " <span class=\"tag\">narrowest</span>" : "");
    o += fmt::format("<div class=\"tube\"><div class=\"flow\" style=\"height:{}px\"></div></div>", h);
    o += fmt::format("<div class=\"rate\">{}</div><div class=\"detail\">{}</div></div>\n", XmlEscape(pipe.rate_text),
                     XmlEscape(pipe.detail));
  }
  o += "</div>\n";
  if (p.narrowest && *p.narrowest < p.pipes.size()) {
    o += fmt::format("<p class=\"narrowest-why\"><b>Narrowest: {}</b>{}{}</p>\n",
                     XmlEscape(p.pipes[*p.narrowest].name), p.narrowest_why.empty() ? "" : " — ",
                     XmlEscape(p.narrowest_why));
  }
  return o;
}

}  // namespace sat::report
