#include "coulomb/io/report_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

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

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return fields;
}

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
