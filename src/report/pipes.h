// The field guide's picture of a training pipeline as HTML: pipes from the data to the model, left to right, each
// as thick as the rate it measured, the narrowest (the one that sets the flow) marked and named. Pipes that were
// not measured are drawn empty with why. HTML and CSS only (no SVG), so the row wraps in a narrow window and the
// labels keep their size. Pure function; the style is the page's (report/page.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sat::report {

struct Pipe {
  std::string name;                // "loader", "compute", ...
  std::optional<double> rate;      // what it carries, in the pipeline's unit; unset: not measured
  std::string rate_text;           // "212 samples/s", or why it was not measured
  std::string detail;              // a line under it: how it was measured
};

struct Pipeline {
  std::vector<Pipe> pipes;                // in the order data flows
  std::optional<size_t> narrowest;        // the pipe marked as narrowest, if any
  std::string narrowest_why;              // its evidence, shown under the picture (text)
};

// <div class="pipes"> with a <div class="pipe"> per pipe ("pipe narrowest" for the marked one, "pipe unmeasured"
// for one without a rate) holding <div class="name">, the tube, <div class="rate"> and <div class="detail">.
std::string RenderPipes(const Pipeline& pipeline);

}  // namespace sat::report
