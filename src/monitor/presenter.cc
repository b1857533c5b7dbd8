#include "monitor/presenter.h"

#include <string>
#include <utility>
#include <vector>

#include "monitor/csv_writer.h"
#include "monitor/json_writer.h"

namespace sat::monitor {
namespace {

class CsvPresenter : public Presenter {
 public:
  CsvPresenter(Query q, Format f) : writer_(std::move(q), f) {}
  void Begin(std::ostream& out) override { writer_.WriteHeader(out); }
  void Write(std::ostream& out, const telemetry::Sample& s) override { writer_.WriteSample(out, s); }

 private:
  CsvWriter writer_;
};

class JsonPresenter : public Presenter {
 public:
  explicit JsonPresenter(Query q) : writer_(std::move(q)) {}
  void Write(std::ostream& out, const telemetry::Sample& s) override { writer_.WriteSample(out, s); }

 private:
  JsonWriter writer_;
};

class HumanPresenter : public Presenter {
 public:
  HumanPresenter(HumanOptions o, bool redraw) : view_(std::move(o)), redraw_(redraw) {}
  void Write(std::ostream& out, const telemetry::Sample& s) override {
    std::vector<std::string> lines = view_.Lines(s);
    if (redraw_) out << RedrawPrefix(previous_);
    for (const auto& l : lines) out << l << '\n';
    if (!redraw_) out << '\n';
    previous_ = lines.size();
  }

 private:
  HumanView view_;
  bool redraw_;
  size_t previous_ = 0;
};

}  // namespace

std::unique_ptr<Presenter> MakePresenter(const Query& query, const Format& format, HumanOptions human, bool redraw) {
  switch (format.kind) {
    case OutputKind::kCsv: return std::make_unique<CsvPresenter>(query, format);
    case OutputKind::kJson: return std::make_unique<JsonPresenter>(query);
    case OutputKind::kHuman: return std::make_unique<HumanPresenter>(std::move(human), redraw);
  }
  return nullptr;
}

}  // namespace sat::monitor
