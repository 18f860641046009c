// explain(): a tuning entry for people; default_db_path(): where the database lives.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include <pwd.h>
#include <unistd.h>

#include "internal.hpp"

namespace tessera::tune {
namespace {

std::string format_time_utc(std::int64_t seconds) {
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  if (seconds == 0) return "unknown";
  if (gmtime_r(&t, &tm) == nullptr) return std::to_string(seconds);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string format_us(double us) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", us);
  return buf;
}

std::string name_of(const Candidate& c) {
  return c.params == "{}" || c.params.empty() ? c.solution : c.solution + " " + c.params;
}

// Measured candidates first, fastest first; ties keep the order they were measured in.
void sort_by_time(std::vector<const Candidate*>& list) {
  std::stable_sort(list.begin(), list.end(), [](const Candidate* a, const Candidate* b) {
    if ((a->samples > 0) != (b->samples > 0)) return a->samples > 0;
    return a->median_us < b->median_us;
  });
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

}  // namespace

std::string explain(const TuneRecord& record) {
  const TuneKey& k = record.key;
  const Candidate* winner = nullptr;
  std::vector<const Candidate*> accepted;
  std::vector<const Candidate*> rejected;
  // The winner's own candidate; by name alone when the params are spelled differently (a
  // record that did not come from the database).
  for (bool match_params : {true, false}) {
    for (const Candidate& c : record.candidates) {
      if (winner != nullptr) break;
      if (c.accepted && c.solution == record.solution &&
          (!match_params || c.params == record.params))
        winner = &c;
    }
  }
  for (const Candidate& c : record.candidates) (c.accepted ? accepted : rejected).push_back(&c);
  sort_by_time(accepted);
  sort_by_time(rejected);

  std::size_t width = 0;
  for (const Candidate& c : record.candidates) width = std::max(width, name_of(c).size());
  auto row = [&](const Candidate& c) {
    std::string line = "    " + name_of(c);
    line.append(width + 2 - name_of(c).size(), ' ');
    if (c.samples == 0) return line + "not measured";
    line += format_us(c.median_us) + " us +- " + format_us(c.spread_us) +
            " (n=" + std::to_string(c.samples) + ")";
    if (winner != nullptr && winner->median_us > 0.0)
      line += "  " + format_us(c.median_us / winner->median_us) + "x";
    return line;
  };

  std::string out = k.library + "/" + k.primitive + "  " + k.signature + "\n";
  out += "  device       " + k.device + "\n";
  out += "  version      " + k.version + "   determinism " + k.determinism + "\n";
  out += "  recorded     " + format_time_utc(record.created_at) + "\n";
  out += "  winner       " + record.solution;
  if (!record.params.empty() && record.params != "{}") out += " " + record.params;
  if (winner != nullptr) out += "  (" + format_us(winner->median_us) + " us)";
  out += "\n";
  out += "  accepted (" + std::to_string(accepted.size()) +
         ", fastest first, time ratio to winner):\n";
  for (const Candidate* c : accepted) {
    out += row(*c);
    if (c == winner) out += "  <- winner";
    if (!c->reason.empty()) out += "  note: " + c->reason;
    out += "\n";
  }
  if (!rejected.empty()) {
    out += "  rejected (" + std::to_string(rejected.size()) + "):\n";
    for (const Candidate* c : rejected) out += row(*c) + "  rejected: " + c->reason + "\n";
  }
  return out;
}

std::string default_db_path() {
  if (const char* path = env("TESSERA_TUNE_DB")) return path;
  // The XDG base directory spec says relative values are to be ignored.
  if (const char* cache = env("XDG_CACHE_HOME"); cache != nullptr && cache[0] == '/')
    return std::string(cache) + "/tessera/tune.sqlite";
  std::string home;
  if (const char* h = env("HOME")) {
    home = h;
  } else {
    passwd pw{};
    passwd* found = nullptr;
    std::vector<char> buf(16384);
    if (getpwuid_r(getuid(), &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr &&
        pw.pw_dir != nullptr)
      home = pw.pw_dir;
  }
  if (home.empty()) return "tessera-tune.sqlite";
  return home + "/.cache/tessera/tune.sqlite";
}

}  // namespace tessera::tune
