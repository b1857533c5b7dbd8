#include "report/share_bar.h"

#include <fmt/core.h>

#include <cmath>

#include "report/page.h"

namespace sat::report {

std::string RenderShareBar(const std::vector<Share>& shares) {
  std::string bar = "<div class=\"sharebar\">", legend = "<div class=\"legend\">";
  for (const Share& s : shares) {
    const double share = std::isfinite(s.share) && s.share > 0 ? s.share : 0;
    const std::string pct = fmt::format("{:.0f}%", share * 100);
    const std::string text = XmlEscape(s.label) + " " + pct;
    bar += fmt::format("<div class=\"part\" style=\"width:{:.2f}%;background:{}\" title=\"{}\">{}</div>", share * 100,
                       s.color, text, share >= 0.12 ? text : "");
    legend += fmt::format("<span><i style=\"background:{}\"></i>{}</span>", s.color, text);
  }
  return bar + "</div>\n" + legend + "</div>\n";
}

}  // namespace sat::report
