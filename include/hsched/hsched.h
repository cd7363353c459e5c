// hsched's public API in one header: load a model, plan it for a target, compile and run it,
// report, calibrate and quantize (docs/api.md).
#pragma once

#include "hsched/atomic_file.h"
#include "hsched/calibrate.h"
#include "hsched/config.h"
#include "hsched/device.h"
#include "hsched/dtype.h"
#include "hsched/executor.h"
#include "hsched/ids.h"
#include "hsched/model.h"
#include "hsched/plan.h"
#include "hsched/policy.h"
#include "hsched/process.h"
#include "hsched/quantize.h"
#include "hsched/report.h"
#include "hsched/schedule.h"
#include "hsched/shape.h"
#include "hsched/status.h"
#include "hsched/tensor.h"
#include "hsched/threads.h"
#include "hsched/trace.h"
#include "hsched/version.h"
