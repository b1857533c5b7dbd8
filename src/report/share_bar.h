// One bar split into shares that add up to the whole (where a training step's time goes: data wait, the model,
// after-step work), as HTML: each part's width is its share, its name and percentage inside it or, when too
// narrow, in the legend under it. Scales with the window. Pure function; the style is the page's (report/page.h).
#pragma once

#include <string>
#include <vector>

namespace sat::report {

struct Share {
  std::string label;
  double share = 0;  // 0..1; negative or non-finite counts as 0
  std::string color;
};

// <div class="sharebar"> with a <div class="part"> per share, and a legend.
std::string RenderShareBar(const std::vector<Share>& shares);

}  // namespace sat::report
