#include "hsched/version.h"

namespace hsched {

const char* version() { return HSCHED_VERSION_STRING; }

}  // namespace hsched
