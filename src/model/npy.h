// NumPy .npy files (format 1.0-3.0, little-endian float32 or float64, C order): the constants
// ailia's SAM 3.1 bundle keeps beside its graphs (npy/sam3.1_*.npy).
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace sam3::detail {

struct NpyArray {
  std::vector<std::int64_t> shape;
  std::vector<float> data;  // float64 files are converted
};

// Throws kModelNotFound for a missing file, kModelMismatch for one that is not such an array.
NpyArray load_npy(const std::filesystem::path& path);

}  // namespace sam3::detail
