#include "run/line_splitter.h"

namespace sat::run {

void LineSplitter::Feed(std::string_view chunk, const Sink& sink) {
  for (char c : chunk) {
    bool was_cr = after_cr_;
    after_cr_ = c == '\r';
    if (c == '\n' && was_cr) continue;
    if (c == '\n' || c == '\r') {
      Emit(sink);
      continue;
    }
    partial_.push_back(c);
    if (partial_.size() >= max_line_bytes_) Emit(sink);
  }
}

void LineSplitter::Finish(const Sink& sink) {
  Emit(sink);
  after_cr_ = false;
}

void LineSplitter::Emit(const Sink& sink) {
  if (!partial_.empty()) sink(partial_);
  partial_.clear();
}

}  // namespace sat::run
