// SCAFFOLD: replaced before the first commit.
#include "storage/array_file.h"
