// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>

namespace irqloop::logger
{

/**
 * @brief A bounded single-producer/single-consumer ring of trivially copyable T.
 *
 * The producer (the sampler) never blocks and never allocates: try_push() fails when the
 * ring is full and the caller counts the overflow. The consumer reads in batches. Capacity
 * is rounded up to a power of two and allocated once, at construction.
 */
template <typename T> class spsc_ring final
{
public:
    explicit spsc_ring(std::size_t capacity)
    {
        std::size_t cap = 2;
        while (cap < capacity)
            cap <<= 1;
        mask_ = cap - 1;
        slots_ = std::make_unique<T[]>(cap);
    }

    std::size_t capacity() const noexcept { return mask_ + 1; }

    /** @brief Producer side. @return false when full (nothing written). */
    bool try_push(const T& v) noexcept
    {
        const std::uint64_t head = head_.load(std::memory_order_relaxed);
        if (head - cached_tail_ > mask_) {
            cached_tail_ = tail_.load(std::memory_order_acquire);
            if (head - cached_tail_ > mask_)
                return false;
        }
        slots_[head & mask_] = v;
        head_.store(head + 1, std::memory_order_release);
        return true;
    }

    /**
     * @brief Consumer side: copy up to out.size() items into out.
     * @return the number copied, 0 when empty.
     */
    std::size_t pop(std::span<T> out) noexcept
    {
        const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
        std::uint64_t avail = head_.load(std::memory_order_acquire) - tail;
        std::size_t n = avail < out.size() ? static_cast<std::size_t>(avail) : out.size();
        for (std::size_t i = 0; i < n; ++i)
            out[i] = slots_[(tail + i) & mask_];
        tail_.store(tail + n, std::memory_order_release);
        return n;
    }

    /** @brief Items waiting; exact for the consumer, a lower bound elsewhere. */
    std::size_t size() const noexcept
    {
        return static_cast<std::size_t>(head_.load(std::memory_order_acquire) -
                                        tail_.load(std::memory_order_acquire));
    }

private:
    static constexpr std::size_t line = 64;
    alignas(line) std::atomic<std::uint64_t> head_{0};
    std::uint64_t cached_tail_ = 0; // producer's copy of tail_, saves a shared load per push
    alignas(line) std::atomic<std::uint64_t> tail_{0};
    alignas(line) std::size_t mask_ = 0;
    std::unique_ptr<T[]> slots_;
};

} // namespace irqloop::logger
