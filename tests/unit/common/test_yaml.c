#include <criterion/criterion.h>
#include "kh/yaml.h"
