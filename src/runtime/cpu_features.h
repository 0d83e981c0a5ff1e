// What the CPU offers for int8 matrix products.
#pragma once

#include <string>

namespace sam3::runtime {

struct CpuFeatures {
  bool avx2 = false, avx512_vnni = false, avx_vnni = false, amx_int8 = false, arm_dotprod = false;
  // u8s8 products are exact and fast only with VNNI/AMX (x86) or dot-product (ARM); AVX2's
  // u8s8 path saturates 16-bit sums, so int8 weights are not used there.
  bool int8_weights_help() const { return avx512_vnni || avx_vnni || amx_int8 || arm_dotprod; }
  std::string summary() const;  // "avx2+avx512_vnni", for cache keys and logs
};

CpuFeatures detect_cpu_features();

}  // namespace sam3::runtime
