#include "coulomb/io/report_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "coulomb/io/simulation_output.h"
#include "coulomb/math/spatial.h"
#include "viewer_assets.h"

namespace coulomb::io {

namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

constexpr const char* kNumericColumns[] = {"t",        "solver_iterations", "line_search_iterations", "contacts",
                                           "momentum_error", "max_penetration_m", "energy_J", "wall_time_s"};
constexpr int kNumNumeric = 8;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot open (is it a `coulomb simulate` output folder?)");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// trajectory.csv quotes names with commas (CsvFile::field); steps.csv has none.
std::vector<std::string> split(const std::string& line) { return split_csv_row(line); }

struct Steps {
  std::vector<double> columns[kNumNumeric];
  std::vector<std::string> status;
  /// Further columns (added after the contract's) whose every entry is a number, in file order.
  std::vector<std::pair<std::string, std::vector<double>>> extra;
};

Steps read_steps(const fs::path& path) {
  std::istringstream in(read_file(path));
  std::string line;
  if (!std::getline(in, line)) throw std::runtime_error(path.string() + ": empty file (expected a header row)");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const std::vector<std::string> header = split(line);
  int index[kNumNumeric];
  int status_index = -1;
  for (int c = 0; c < kNumNumeric; ++c) {
    const auto it = std::find(header.begin(), header.end(), kNumericColumns[c]);
    if (it == header.end())
      throw std::runtime_error(path.string() + ":1: no column '" + kNumericColumns[c] + "' in the header");
    index[c] = static_cast<int>(it - header.begin());
  }
  if (const auto it = std::find(header.begin(), header.end(), "status"); it != header.end())
    status_index = static_cast<int>(it - header.begin());
  Steps steps;
  std::vector<int> extra_index;
  for (int i = 0; i < static_cast<int>(header.size()); ++i)
    if (i != status_index && std::find(std::begin(index), std::end(index), i) == std::end(index)) {
      extra_index.push_back(i);
      steps.extra.emplace_back(header[i], std::vector<double>());
    }
  std::vector<bool> extra_numeric(extra_index.size(), true);

  int line_number = 1;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string> fields = split(line);
    if (fields.size() != header.size())
      throw std::runtime_error(path.string() + ":" + std::to_string(line_number) + ": " +
                               std::to_string(fields.size()) + " fields, the header has " +
                               std::to_string(header.size()));
    for (int c = 0; c < kNumNumeric; ++c) {
      const std::string& text = fields[index[c]];
      char* end = nullptr;
      const double x = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size())
        throw std::runtime_error(path.string() + ":" + std::to_string(line_number) + ": column '" + kNumericColumns[c] +
                                 "': not a number: '" + text + "'");
      steps.columns[c].push_back(x);
    }
    steps.status.push_back(status_index >= 0 ? fields[status_index] : "success");
    for (std::size_t e = 0; e < extra_index.size(); ++e) {
      const std::string& text = fields[extra_index[e]];
      char* end = nullptr;
      const double x = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size()) extra_numeric[e] = false;
      steps.extra[e].second.push_back(x);
    }
  }
  for (std::size_t e = extra_index.size(); e-- > 0;)
    if (!extra_numeric[e]) steps.extra.erase(steps.extra.begin() + e);
  return steps;
}

/// The robot's series from trajectory.csv (absent or unreadable: an empty object, the report
/// shows the solver alone): per 1-dof joint of the robots in stats.json its q, v and tau
/// columns, per body its contact_fz, and the floating bases' height and roll, pitch, yaw. One
/// row in `stride` is kept (the last of each run), so that the plots stay light.
Json read_robot_series(const fs::path& path, const Json& stats, std::size_t max_points) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Json::object();
  std::string line;
  if (!std::getline(in, line)) return Json::object();
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const std::vector<std::string> header = split(line);
  std::map<std::string, int> column;
  for (int i = 0; i < static_cast<int>(header.size()); ++i) column[header[i]] = i;
  if (!column.count("t")) return Json::object();
  // What to read: joints of the robots (in stats.json order), every contact_fz column, bases.
  struct Wanted {
    std::string name;
    int q = -1, v = -1, tau = -1;
  };
  std::vector<Wanted> joints;
  std::vector<std::pair<std::string, int>> forces;
  struct Base {
    std::string name;
    int z = -1, qw = -1, qx = -1, qy = -1, qz = -1;
  };
  std::vector<Base> bases;
  if (stats.contains("robots") && stats["robots"].is_array())
    for (const Json& r : stats["robots"]) {
      if (r.contains("joints"))
        for (const Json& jn : r["joints"]) {
          const std::string name = jn.get<std::string>();
          Wanted w{name};
          if (column.count(name + ".q")) w.q = column[name + ".q"];
          if (column.count(name + ".v")) w.v = column[name + ".v"];
          if (column.count(name + ".tau")) w.tau = column[name + ".tau"];
          if (w.q >= 0) joints.push_back(w);
        }
      if (r.value("floating", false) && r.contains("base")) {
        const std::string b = r["base"].get<std::string>();
        Base base{b};
        for (auto [suffix, slot] : {std::pair{".z", &base.z}, {".qw", &base.qw}, {".qx", &base.qx}, {".qy", &base.qy},
                                    {".qz", &base.qz}})
          if (column.count(b + suffix)) *slot = column[b + suffix];
        if (base.z >= 0 && base.qz >= 0) bases.push_back(base);
      }
    }
  // Contact forces: on the robots' bodies (their feet) when the scene has robots, else on every body.
  std::set<std::string> robot_bodies;
  if (stats.contains("robots") && stats["robots"].is_array())
    for (const Json& r : stats["robots"])
      if (r.contains("bodies"))
        for (const Json& b : r["bodies"]) robot_bodies.insert(b.get<std::string>());
  const std::string fz = ".contact_fz";
  for (int i = 0; i < static_cast<int>(header.size()); ++i)
    if (header[i].size() > fz.size() && header[i].compare(header[i].size() - fz.size(), fz.size(), fz) == 0) {
      const std::string body = header[i].substr(0, header[i].size() - fz.size());
      if (robot_bodies.empty() || robot_bodies.count(body)) forces.emplace_back(body, i);
    }
  if (joints.empty() && forces.empty() && bases.empty()) return Json::object();

  // Two passes: count the rows, then keep the last row of each run of `stride` (memory grows
  // with the points plotted, not with the file).
  const std::streampos data_start = in.tellg();
  std::size_t num_rows = 0;
  while (std::getline(in, line))
    if (!line.empty() && line != "\r") ++num_rows;
  const std::size_t stride = num_rows > max_points ? (num_rows + max_points - 1) / max_points : 1;
  in.clear();
  in.seekg(data_start);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> kept;
  for (std::size_t i = 0; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (i % stride == stride - 1 || i + 1 == num_rows) {
      std::vector<std::string> fields = split(line);
      if (fields.size() != header.size()) break;  // a truncated last row: plot what is whole
      kept.push_back(rows.size());
      rows.push_back(std::move(fields));
    }
    ++i;
  }
  auto number = [](const std::string& text) -> Json {
    char* end = nullptr;
    const double x = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(x)) return nullptr;
    return x;
  };
  auto series = [&](int c) {
    Json a = Json::array();
    for (std::size_t i : kept) a.push_back(c >= 0 ? number(rows[i][c]) : Json(nullptr));
    return a;
  };
  Json out;
  out["t"] = series(column["t"]);
  out["stride"] = stride;
  Json jl = Json::array();
  for (const Wanted& w : joints)
    jl.push_back({{"name", w.name}, {"q", series(w.q)}, {"v", series(w.v)}, {"tau", w.tau >= 0 ? series(w.tau) : Json(nullptr)}});
  out["joints"] = std::move(jl);
  Json fl = Json::array();
  for (const auto& [name, c] : forces) fl.push_back({{"name", name}, {"data", series(c)}});
  out["contact_fz"] = std::move(fl);
  Json bl = Json::array();
  for (const Base& b : bases) {
    Json z = Json::array(), roll = Json::array(), pitch = Json::array(), yaw = Json::array();
    for (std::size_t i : kept) {
      const Json qw = number(rows[i][b.qw]), qx = number(rows[i][b.qx]), qy = number(rows[i][b.qy]), qz = number(rows[i][b.qz]);
      z.push_back(number(rows[i][b.z]));
      if (qw.is_null() || qx.is_null() || qy.is_null() || qz.is_null()) {
        roll.push_back(nullptr), pitch.push_back(nullptr), yaw.push_back(nullptr);
        continue;
      }
      const math::Quaternion quat(qw.get<double>(), qx.get<double>(), qy.get<double>(), qz.get<double>());
      const math::Vector3 rpy = math::rpy_from_rotation(quat.normalized().toRotationMatrix());
      roll.push_back(rpy.x()), pitch.push_back(rpy.y()), yaw.push_back(rpy.z());
    }
    bl.push_back({{"name", b.name}, {"z", z}, {"roll", roll}, {"pitch", pitch}, {"yaw", yaw}});
  }
  out["bases"] = std::move(bl);
  return out;
}

}  // namespace

std::string report_html(const std::string& directory, const ReportOptions& options) {
  const fs::path dir(directory);
  const Steps steps = read_steps(dir / "steps.csv");
  Json stats;
  const fs::path stats_path = dir / "stats.json";
  try {
    stats = Json::parse(read_file(stats_path));
  } catch (const Json::exception& e) {
    throw std::runtime_error(stats_path.string() + ": not valid JSON: " + e.what());
  }

  const std::size_t rows = steps.status.size();
  const std::size_t max_points = std::max<std::size_t>(2, options.max_points);
  const std::size_t bucket = rows > max_points ? (rows + max_points - 1) / max_points : 1;
  // One point per bucket: the largest value, or the last one (time, energy).
  const auto decimate = [&](const std::vector<double>& in, bool last_of_bucket) {
    Json out = Json::array();
    for (std::size_t begin = 0; begin < rows; begin += bucket) {
      const std::size_t end = std::min(rows, begin + bucket);
      double value = in[end - 1];
      if (!last_of_bucket)
        for (std::size_t i = begin; i < end; ++i) value = std::max(value, in[i]);
      if (std::isfinite(value))
        out.push_back(value);
      else
        out.push_back(nullptr);
    }
    return out;
  };
  Json series = Json::object();
  for (int c = 0; c < kNumNumeric; ++c)
    series[kNumericColumns[c]] = decimate(steps.columns[c], c == 0 || std::strcmp(kNumericColumns[c], "energy_J") == 0);
  Json extra = Json::array();
  for (const auto& [name, values] : steps.extra)
    extra.push_back(Json{{"name", name}, {"data", decimate(values, false)}});
  std::map<std::string, std::size_t> status_counts;
  Json failure_times = Json::array();
  for (std::size_t i = 0; i < rows; ++i) {
    ++status_counts[steps.status[i]];
    if (steps.status[i] != "success" && failure_times.size() < 100) failure_times.push_back(steps.columns[0][i]);
  }

  Json j;
  j["format"] = "coulomb-report";
  j["version"] = 1;
  j["title"] = stats.contains("scene") && stats["scene"].is_string() ? stats["scene"].get<std::string>()
                                                                      : dir.filename().string();
  j["replay"] = fs::exists(dir / "replay.html") ? "replay.html" : "";
  j["stats"] = stats;
  Json s;
  s["rows"] = rows;
  s["decimated_to"] = bucket > 1 ? series["t"].size() : 0;
  for (auto& [key, value] : series.items()) s[key] = value;
  s["status_counts"] = Json(status_counts);
  s["failure_times"] = std::move(failure_times);
  s["extra"] = std::move(extra);
  j["steps"] = std::move(s);
  j["robot"] = read_robot_series(dir / "trajectory.csv", stats, max_points);

  std::string data = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  // Inside <script>, "</script" or "<!--" in a name would end or confuse the element: every '<'
  // (only ever inside a JSON string) becomes the escape \u003c, the same JSON string.
  for (std::size_t pos = data.find('<'); pos != std::string::npos; pos = data.find('<', pos + 6))
    data.replace(pos, 1, "\\u003c");
  return std::string(viewer_assets::kReportHtmlBefore) + data + viewer_assets::kReportHtmlAfter;
}

std::size_t write_report(const std::string& directory, const ReportOptions& options) {
  const std::string text = report_html(directory, options);
  const fs::path path = fs::path(directory) / "report.html";
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error(path.string() + ": cannot open for writing");
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw std::runtime_error(path.string() + ": write failed");
  return text.size();
}

}  // namespace coulomb::io
