#include "util/spans.h"

#include <algorithm>

namespace sat {

double UnionLength(std::vector<Span> spans) {
  spans.erase(std::remove_if(spans.begin(), spans.end(), [](const Span& s) { return s.end <= s.start; }),
              spans.end());
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  double total = 0, start = 0, end = -1;
  bool open = false;
  for (const Span& s : spans) {
    if (open && s.start <= end) {
      end = std::max(end, s.end);
      continue;
    }
    if (open) total += end - start;
    start = s.start;
    end = s.end;
    open = true;
  }
  if (open) total += end - start;
  return total;
}

}  // namespace sat
