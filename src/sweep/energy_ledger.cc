#include "sweep/energy_ledger.h"

#include <algorithm>

namespace sat::sweep {

void EnergyLedger::Begin(int64_t attempt, int device, double t) {
  devices_[device].presences.push_back(Presence{.attempt = attempt, .from = t, .to = std::nullopt});
  accounts_[attempt] = Account{.device = device};
}

void EnergyLedger::Credit(const std::vector<Presence>& presences, double t0, double t1, double power_w) {
  // The instants where the number of attempts present changes cut [t0, t1] into segments of one split each.
  std::vector<double> cuts{t0, t1};
  for (const Presence& p : presences) {
    if (p.from > t0 && p.from < t1) cuts.push_back(p.from);
    if (p.to && *p.to > t0 && *p.to < t1) cuts.push_back(*p.to);
  }
  std::sort(cuts.begin(), cuts.end());
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    const double a = cuts[i], b = cuts[i + 1];
    if (!(b > a)) continue;
    auto covers = [&](const Presence& p) { return p.from <= a && (!p.to || *p.to >= b); };
    const auto n = std::count_if(presences.begin(), presences.end(), covers);
    if (n == 0) continue;
    for (const Presence& p : presences) {
      if (!covers(p) || p.to) continue;
      Account& acc = accounts_[p.attempt];
      acc.joules += power_w * (b - a) / static_cast<double>(n);
      acc.known = true;
    }
  }
}

void EnergyLedger::Read(int device, const EnergyReading& reading) {
  if (!reading.counter_j && !reading.power_w) return;  // the next reading covers the gap
  Device& d = devices_[device];
  if (d.last) {
    if (!(reading.t > d.last->t)) return;
    if (std::optional<double> joules = telemetry::EnergyBetweenReadings(*d.last, reading, max_gap_s_)) {
      const double watts = *joules / (reading.t - d.last->t);
      Credit(d.presences, d.last->t, reading.t, watts);
      d.watts = watts;
      d.total_j = d.total_j.value_or(0) + *joules;
    } else {
      MarkGap(d.presences, reading.t);
      d.watts = reading.power_w;
    }
  } else if (reading.power_w) {
    d.watts = reading.power_w;
  }
  d.last = reading;
  // Ended attempts had their share up to here estimated; the live ones count on from this reading.
  std::erase_if(d.presences, [](const Presence& p) { return p.to.has_value(); });
  for (Presence& p : d.presences) p.from = std::max(p.from, reading.t);
}

std::optional<double> EnergyLedger::End(int64_t attempt, double t) {
  auto acc = accounts_.find(attempt);
  if (acc == accounts_.end()) return std::nullopt;
  Device& d = devices_[acc->second.device];
  auto p = std::find_if(d.presences.begin(), d.presences.end(),
                        [&](const Presence& x) { return x.attempt == attempt && !x.to; });
  if (p != d.presences.end()) {
    p->to = std::max(t, p->from);
    // Its last part, since the latest reading, at the latest power, as shared with those live now; not when that
    // reading is too old to stand for the power since.
    if (d.last && *p->to - d.last->t > max_gap_s_) acc->second.gap = true;
    if (d.last && d.watts && *p->to > d.last->t && !acc->second.gap) {
      // Only this attempt is credited; the others present then count in the split, credited at the next reading.
      const double to = *p->to;
      std::vector<Presence> tail = d.presences;
      for (Presence& x : tail) {
        if (x.attempt == attempt) {
          x.to.reset();
        } else if (!x.to) {
          x.to = to;
        }
      }
      Credit(tail, std::max(p->from, d.last->t), to, *d.watts);
    }
  }
  const Account done = acc->second;
  accounts_.erase(acc);
  return done.known && !done.gap ? std::optional(done.joules) : std::nullopt;
}

void EnergyLedger::MarkGap(const std::vector<Presence>& presences, double t1) {
  for (const Presence& p : presences) {
    if (p.to || p.from >= t1) continue;
    if (auto acc = accounts_.find(p.attempt); acc != accounts_.end()) acc->second.gap = true;
  }
}

std::optional<double> EnergyLedger::DeviceJoules(int device) const {
  auto d = devices_.find(device);
  return d == devices_.end() ? std::nullopt : d->second.total_j;
}

}  // namespace sat::sweep
