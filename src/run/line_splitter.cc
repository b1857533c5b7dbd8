#include "run/line_splitter.h"

#include "util/utf8.h"

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
    if (partial_.size() >= max_line_bytes_) EmitPiece(sink);
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

void LineSplitter::EmitPiece(const Sink& sink) {
  // The piece ends on a character boundary; the bytes of a character cut in two start the next piece.
  const size_t cut = CompleteUtf8Length(partial_);
  if (cut == partial_.size() || cut == 0) {
    Emit(sink);
    return;
  }
  std::string rest = partial_.substr(cut);
  partial_.resize(cut);
  Emit(sink);
  partial_ = std::move(rest);
}

}  // namespace sat::run
