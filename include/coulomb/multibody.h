// Convenience header: the whole multibody layer.
#pragma once

#include "coulomb/math/spatial.h"
#include "coulomb/multibody/aba.h"
#include "coulomb/multibody/configuration.h"
#include "coulomb/multibody/crba.h"
#include "coulomb/multibody/energy.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/multibody/frame_jacobian.h"
#include "coulomb/multibody/joint.h"
#include "coulomb/multibody/model.h"
#include "coulomb/multibody/momentum.h"
#include "coulomb/multibody/rnea.h"
#include "coulomb/multibody/workspace.h"
