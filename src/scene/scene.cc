#include "coulomb/scene/scene.h"

namespace coulomb::scene {

const char* to_string(BilateralType type) {
  switch (type) {
    case BilateralType::kBall: return "ball";
    case BilateralType::kWeld: return "weld";
    case BilateralType::kDistance: return "distance";
    case BilateralType::kRevolute: return "revolute";
    case BilateralType::kPrismatic: return "prismatic";
  }
  return "unknown";
}

int num_rows(BilateralType type) {
  switch (type) {
    case BilateralType::kBall: return 3;
    case BilateralType::kWeld: return 6;
    case BilateralType::kDistance: return 1;
    case BilateralType::kRevolute: return 5;
    case BilateralType::kPrismatic: return 5;
  }
  return 0;
}

}  // namespace coulomb::scene
