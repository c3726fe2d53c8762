// Implementation pending (issue 13).
#include "coulomb/control/controllers.h"
