// The header declares a type only; a C target needs one source file.
#include "CLibHEIFABI.h"
