// Giving the malloc heap's free pages back to the system, for a long-running process.
//
// glibc's malloc serves each thread from one of several arenas. hsched's threads come and go
// (a compile deadline's worker per build, an Executable's device threads, a caller's request
// threads), so the weights, activations and driver payloads of one Executable are allocated in
// some arenas and freed, at its end, into others' holes; the next Executable, built on new
// threads, fills other arenas. The bytes in use stay flat, but the free space between them stays
// resident: the soak (scripts/soak.sh) saw RSS grow ~20% over 30 minutes of recompiles that way,
// with no live object leaked. glibc frees the pages in the middle of an arena only on request.
#pragma once

namespace hsched {

// Gives every page of free heap memory, in every malloc arena, back to the system (glibc:
// malloc_trim(0), which also unmaps free space at an arena's top). Call it after releasing a
// large amount of memory at once (a build's end, an Executable's end), not per request: it walks
// each arena's free lists under that arena's lock, so a thread allocating meanwhile may wait
// (the soak's heap, ~260 MiB in use and ~100 MiB free in 13 arenas: 0.5 to 25 ms a call,
// typically ~10 ms, on a loaded 2-core machine). Pages given back cost a page fault each when
// used again. True when memory was given back; false when there was none, or where the C library
// has no such call. Thread-safe.
bool release_free_heap_memory();

// Calls release_free_heap_memory() when destroyed. As the first member of an owner of large
// buffers it runs after every other member, i.e. once those buffers are freed.
struct ReleaseFreeHeapMemoryAtEnd {
  ReleaseFreeHeapMemoryAtEnd() = default;
  ReleaseFreeHeapMemoryAtEnd(const ReleaseFreeHeapMemoryAtEnd&) = delete;
  ReleaseFreeHeapMemoryAtEnd& operator=(const ReleaseFreeHeapMemoryAtEnd&) = delete;
  ~ReleaseFreeHeapMemoryAtEnd() { release_free_heap_memory(); }
};

}  // namespace hsched
