// Interposes glibc's allocator for the whole coulomb_tests executable (see heap_counter.h):
// every allocation is forwarded to glibc's own (__libc_malloc, …) and its usable size added to
// the bytes in use; while a HeapCounter is armed, allocations are counted and the peak of the
// bytes in use is kept. COULOMB_ALLOC_TRACE=1 prints the call stacks of the first 40 counted
// allocations.
#include "heap_counter.h"

#include <execinfo.h>
#include <malloc.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t n, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void __libc_free(void* p);
void* __libc_memalign(std::size_t alignment, std::size_t size);
void* __libc_valloc(std::size_t size);
void* __libc_pvalloc(std::size_t size);
}

namespace {

std::atomic<bool> g_armed{false};
std::atomic<long> g_allocations{0};
std::atomic<std::int64_t> g_in_use{0};
std::atomic<std::int64_t> g_peak{0};

void trace() {
  if (std::getenv("COULOMB_ALLOC_TRACE") && g_allocations.load() <= 40) {
    g_armed = false;
    void* frames[24];
    const int n = backtrace(frames, 24);
    backtrace_symbols_fd(frames, n, 2);
    std::fprintf(stderr, "----\n");
    g_armed = true;
  }
}

void* allocated(void* p) {
  if (p == nullptr) return p;
  const std::int64_t now = g_in_use.fetch_add(static_cast<std::int64_t>(malloc_usable_size(p)), std::memory_order_relaxed) +
                           static_cast<std::int64_t>(malloc_usable_size(p));
  if (g_armed.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    std::int64_t peak = g_peak.load(std::memory_order_relaxed);
    while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    trace();
  }
  return p;
}

void released(void* p) {
  if (p != nullptr) g_in_use.fetch_sub(static_cast<std::int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
}

}  // namespace

// Under AddressSanitizer (COULOMB_SANITIZE, `make test-sanitize`) the sanitizer owns malloc: an
// interposed malloc here would take the heap away from its checks. The counter then counts
// nothing, and the suites that rely on it (AllocationTest, SimulatorMemoryTest) are left out of
// that run (Makefile, test-sanitize).
#ifndef COULOMB_HEAP_COUNTER_DISABLED
extern "C" {
void* malloc(std::size_t size) { return allocated(__libc_malloc(size)); }
void* calloc(std::size_t n, std::size_t size) { return allocated(__libc_calloc(n, size)); }
void* realloc(void* p, std::size_t size) {
  released(p);
  void* q = __libc_realloc(p, size);
  if (q == nullptr && size != 0 && p != nullptr) {  // failed: p is still allocated
    allocated(p);
    return nullptr;
  }
  return allocated(q);
}
void free(void* p) {
  released(p);
  __libc_free(p);
}
void* memalign(std::size_t alignment, std::size_t size) { return allocated(__libc_memalign(alignment, size)); }
void* aligned_alloc(std::size_t alignment, std::size_t size) { return allocated(__libc_memalign(alignment, size)); }
int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = allocated(p);
  return 0;
}
void* valloc(std::size_t size) { return allocated(__libc_valloc(size)); }
void* pvalloc(std::size_t size) { return allocated(__libc_pvalloc(size)); }
}

#endif  // COULOMB_HEAP_COUNTER_DISABLED

namespace coulomb::testing {

HeapCounter::HeapCounter() {
  g_armed = false;
  g_allocations = 0;
  base_ = g_in_use.load();
  g_peak = base_;
  g_armed = true;
}

HeapCounter::~HeapCounter() { g_armed = false; }

long HeapCounter::allocations() const { return g_allocations.load(); }

std::int64_t HeapCounter::bytes() const { return g_in_use.load() - base_; }

std::int64_t HeapCounter::peak_bytes() const { return g_peak.load() - base_; }

}  // namespace coulomb::testing
