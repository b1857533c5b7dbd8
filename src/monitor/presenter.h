// How `saturate monitor` shows its samples: CSV (nvidia-smi's), JSON lines, or the human view, printed plainly
// or redrawn in place on a terminal. Not thread-safe; one loop writes.
#pragma once

#include <cstddef>
#include <memory>
#include <ostream>

#include "monitor/format.h"
#include "monitor/human_view.h"
#include "monitor/query.h"
#include "telemetry/sample.h"

namespace sat::monitor {

class Presenter {
 public:
  virtual ~Presenter() = default;
  // Once, before the first sample (CSV's header).
  virtual void Begin(std::ostream& out) {}
  virtual void Write(std::ostream& out, const telemetry::Sample& s) = 0;
};

// The presenter `format.kind` names: CSV of `query`, JSON lines of `query`, or the human view with `human`
// (redrawn in place when `redraw`: a terminal, and no command output mixed in).
std::unique_ptr<Presenter> MakePresenter(const Query& query, const Format& format, HumanOptions human, bool redraw);

}  // namespace sat::monitor
