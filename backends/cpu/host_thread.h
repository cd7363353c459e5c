// The host thread: the one thread of a
// process that runs CPU programs (their oneDNN primitives and OpenMP regions, and the oneTBB
// arena they enter).
//
// Why one host thread: libgomp spins between parallel regions only while the threads it manages
// do not outnumber the CPUs. Every thread that opens a region gets a team of its own, so a second
// such thread (a oneTBB worker running a partition one request, the main thread the next) tips a
// 2-core machine into libgomp's throttled mode for the rest of the process: team threads sleep
// after a few hundred spins and every region pays a futex wake. mobilenet_v3_small measured
// 2.7 ms instead of 1.45 in one process of eight, and calibration's tiny convolutions 0.03 ms
// instead of 0.007 in one run of three. With every region opened on the host thread there is one
// team. (The simulated Level Zero driver links its own copy of this library, so its NPU
// partitions have a host thread of their own.)
#pragma once

#include <functional>

#include "core/work_thread.h"

namespace hsched::cpu {

// Runs `work` on the host thread and returns once it has run; on the host thread itself, runs it
// in place (a program run from another program's step). Rethrows what `work` throws.
void run_on_host_thread(const std::function<void()>& work);

// Queues `work` on the host thread and returns at once (the executor's CPU partitions, which
// must not hold a oneTBB worker while they wait).
void post_to_host_thread(std::function<void()> work);

}  // namespace hsched::cpu
