// Cuts a byte stream into lines as chunks arrive from a pipe.
//
// A line ends at '\n' or at '\r' (progress bars such as tqdm redraw themselves with '\r'); "\r\n" is one
// break. Empty lines are dropped: they carry nothing for the line consumers, and the raw bytes are in the log.
// A line longer than max_line_bytes is cut into pieces of about that size (on UTF-8 character boundaries, so a
// piece never ends inside a character) so a stream without breaks cannot grow memory without bound. Not thread-safe: one splitter per stream, fed by one thread.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace sat::run {

class LineSplitter {
 public:
  using Sink = std::function<void(std::string_view line)>;

  explicit LineSplitter(size_t max_line_bytes = 64 * 1024) : max_line_bytes_(max_line_bytes) {}

  // Calls `sink` for every line completed by `chunk`. The view is valid only during the call.
  void Feed(std::string_view chunk, const Sink& sink);

  // Delivers the unterminated rest (the stream ended without a final break).
  void Finish(const Sink& sink);

 private:
  void Emit(const Sink& sink);
  void EmitPiece(const Sink& sink);

  size_t max_line_bytes_;
  std::string partial_;
  bool after_cr_ = false;  // the previous byte was '\r', so a '\n' now ends nothing new
};

}  // namespace sat::run
