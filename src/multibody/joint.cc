#include "coulomb/multibody/joint.h"

namespace coulomb::multibody {

const char* joint_type_name(JointType type) {
  switch (type) {
    case JointType::kFixed: return "fixed";
    case JointType::kRevolute: return "revolute";
    case JointType::kPrismatic: return "prismatic";
    case JointType::kFloating: return "floating";
    case JointType::kBall: return "ball";
  }
  return "unknown";
}

int joint_nq(JointType type) {
  switch (type) {
    case JointType::kRevolute:
    case JointType::kPrismatic: return 1;
    case JointType::kFloating: return 7;
    case JointType::kBall: return 4;
    case JointType::kFixed: return 0;
  }
  return 0;
}

int joint_nv(JointType type) {
  switch (type) {
    case JointType::kRevolute:
    case JointType::kPrismatic: return 1;
    case JointType::kFloating: return 6;
    case JointType::kBall: return 3;
    case JointType::kFixed: return 0;
  }
  return 0;
}

}  // namespace coulomb::multibody
