// COULOMB_MODEL_PATH, the search path of the model loaders (URDF meshes, SDF <include>s).
// Internal to src/io.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace coulomb::io::internal {

/// The colon-separated directories of the environment variable COULOMB_MODEL_PATH, in order,
/// empty entries dropped; none when it is unset.
inline std::vector<std::filesystem::path> model_path_dirs() {
  std::vector<std::filesystem::path> dirs;
  const char* env = std::getenv("COULOMB_MODEL_PATH");
  if (env == nullptr) return dirs;
  std::string entry;
  std::istringstream in{std::string(env)};
  while (std::getline(in, entry, ':'))
    if (!entry.empty()) dirs.emplace_back(entry);
  return dirs;
}

}  // namespace coulomb::io::internal
