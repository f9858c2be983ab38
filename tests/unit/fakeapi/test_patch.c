#include <criterion/criterion.h>
#include "patch.h"
