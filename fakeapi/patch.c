#include "patch.h"
