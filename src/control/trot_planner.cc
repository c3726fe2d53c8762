// Implementation pending (issue 13).
#include "coulomb/control/trot_planner.h"
