#include <criterion/criterion.h>
#include "schema.h"
