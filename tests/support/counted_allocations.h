// Counts every allocation of the program that includes it (operator new replaced): the bytes
// live now and the peak while a piece of work runs, for tests that bound memory by bytes held
// rather than by time. Include it in exactly one source file of a test program.
#pragma once

#include <malloc.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace sam3::test {
namespace counted {

inline std::atomic<std::int64_t> live{0}, peak{0};

inline void* count(void* p) {
  if (!p) throw std::bad_alloc();
  const auto size = static_cast<std::int64_t>(malloc_usable_size(p));
  const auto now = live.fetch_add(size) + size;
  for (auto seen = peak.load(); now > seen && !peak.compare_exchange_weak(seen, now);) {
  }
  return p;
}

inline void release(void* p) {
  if (!p) return;
  live.fetch_sub(static_cast<std::int64_t>(malloc_usable_size(p)));
  std::free(p);
}

}  // namespace counted

// Bytes allocated and not yet freed.
inline std::int64_t live_bytes() { return counted::live.load(); }

// The peak of live bytes while `run` runs, above what was live when it began.
template <typename F>
std::int64_t peak_of(F&& run) {
  const auto before = counted::live.load();
  counted::peak.store(before);
  run();
  return counted::peak.load() - before;
}

}  // namespace sam3::test

void* operator new(std::size_t n) { return sam3::test::counted::count(std::malloc(n ? n : 1)); }
void* operator new[](std::size_t n) { return sam3::test::counted::count(std::malloc(n ? n : 1)); }
void* operator new(std::size_t n, std::align_val_t a) {
  const auto align = static_cast<std::size_t>(a);
  return sam3::test::counted::count(std::aligned_alloc(align, (n + align - 1) / align * align));
}
void* operator new[](std::size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p) noexcept { sam3::test::counted::release(p); }
void operator delete[](void* p) noexcept { sam3::test::counted::release(p); }
void operator delete(void* p, std::size_t) noexcept { sam3::test::counted::release(p); }
void operator delete[](void* p, std::size_t) noexcept { sam3::test::counted::release(p); }
void operator delete(void* p, std::align_val_t) noexcept { sam3::test::counted::release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { sam3::test::counted::release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { sam3::test::counted::release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { sam3::test::counted::release(p); }
