// Calibration's implementation (include/hsched/calibrate.h documents it).
#pragma once

#include "hsched/calibrate.h"
#include "hsched/device.h"
#include "hsched/status.h"
#include "scheduler/calibration/measure.h"

namespace hsched::calibration {

// The public calls (include/hsched/calibrate.h) forward to these.
Result<CalibrationReport> calibrate_one_device(const DeviceProfile& device,
                                               const DeviceProfile& host,
                                               const DeviceProfile* previous,
                                               const CalibrateOptions& options);
Result<SpeedCheck> check_one_device(const DeviceProfile& device, const DeviceProfile& host,
                                    const DeviceProfile& calibrated,
                                    const CalibrateOptions& options);

}  // namespace hsched::calibration
