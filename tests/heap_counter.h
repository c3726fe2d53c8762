// Heap use of the test process: coulomb_tests interposes glibc's allocator (heap_counter.cc:
// malloc, calloc, realloc, free and the aligned variants; operator new and Eigen's
// aligned_malloc go through malloc), so every heap allocation of the process, the library's
// included, is seen. A HeapCounter arms the counting for its lifetime; one at a time.
#pragma once

#include <cstdint>

namespace coulomb::testing {

class HeapCounter {
 public:
  HeapCounter();   ///< arms: allocations counted, and the peak measured, from here
  ~HeapCounter();  ///< disarms
  HeapCounter(const HeapCounter&) = delete;
  HeapCounter& operator=(const HeapCounter&) = delete;

  /// Number of malloc / calloc / realloc / aligned allocation calls since construction.
  long allocations() const;
  /// Heap bytes in use now minus in use at construction (malloc_usable_size of every block) [B].
  std::int64_t bytes() const;
  /// The largest bytes() seen since construction (transient buffers included) [B].
  std::int64_t peak_bytes() const;

 private:
  std::int64_t base_ = 0;
};

}  // namespace coulomb::testing
