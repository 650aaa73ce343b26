// Training checkpoints: the model with its initializers (weights and optimizer state) as they
// are after a step, in DIR/ckpt-<step>.onnx, with a manifest DIR/ckpt-<step>.json holding the
// step, the file's size and its SHA-256. Both are written to a temporary name, flushed to disk
// and renamed, the manifest last: a checkpoint whose manifest exists is complete. The two most
// recent are kept.
//
//   SL_RETURN_IF_ERROR(WriteCheckpoint(dir, step, model_bytes));
//   SL_ASSIGN_OR_RETURN(std::optional<Checkpoint> last, FindCheckpoint(dir, &skipped));
#ifndef SLUICE_TRAINING_CHECKPOINT_H_
#define SLUICE_TRAINING_CHECKPOINT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sluice {

struct Checkpoint {
  int64_t step = 0;
  std::string path;  // The model file.
};

// Writes `model_bytes` as the checkpoint of `step` (creating `dir`), then removes all but the
// two most recent checkpoints.
absl::Status WriteCheckpoint(const std::string& dir, int64_t step, const std::string& model_bytes);

// The most recent complete checkpoint whose file matches its manifest; none when `dir` holds
// none (or does not exist). Checkpoints passed over (a missing, truncated or changed file, a
// manifest that does not parse) are described in `skipped`, naming their files.
absl::StatusOr<std::optional<Checkpoint>> FindCheckpoint(const std::string& dir,
                                                        std::vector<std::string>* skipped);

}  // namespace sluice

#endif  // SLUICE_TRAINING_CHECKPOINT_H_
