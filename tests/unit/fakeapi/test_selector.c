#include <criterion/criterion.h>
#include "selector.h"
