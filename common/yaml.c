#include "kh/yaml.h"
