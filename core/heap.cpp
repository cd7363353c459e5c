#include "core/heap.h"

#include <cstdlib>  // defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace hsched {

bool release_free_heap_memory() {
#if defined(__GLIBC__)
  // 0: keep no slack at the top of the main heap. Besides trimming tops, glibc (since 2.8)
  // releases the whole free pages inside every arena with madvise(MADV_DONTNEED).
  return malloc_trim(0) != 0;
#else
  return false;
#endif
}

}  // namespace hsched
