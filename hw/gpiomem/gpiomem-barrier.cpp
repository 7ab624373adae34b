// SPDX-License-Identifier: MIT
#include "gpiomem-barrier.hpp"

namespace irqloop::hw
{

void gpiomem_complete() noexcept
{
#if defined(__aarch64__)
    asm volatile("dsb sy\n\tisb" ::: "memory");
#elif defined(__arm__) && __ARM_ARCH >= 7
    asm volatile("dsb\n\tisb" ::: "memory");
#elif defined(__arm__)
    // ARMv6: c7, c10, 4 is the data synchronization barrier (ARMv7's dsb), c7, c5, 4 the
    // prefetch flush (isb); both take a register that should be zero.
    asm volatile("mcr p15, 0, %0, c7, c10, 4\n\tmcr p15, 0, %0, c7, c5, 4" ::"r"(0) : "memory");
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

} // namespace irqloop::hw
