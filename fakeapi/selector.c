#include "selector.h"
