// Implementation pending (issue 13).
#include "coulomb/control/arm_reference.h"
