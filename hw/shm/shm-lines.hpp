// SPDX-License-Identifier: MIT
#pragma once

#include "lines.hpp"
#include "spec.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace irqloop::hw {

/**
 * @brief The layout of a shared-memory wire (/dev/shm/irqloop-NAME). Each level sits on its
 * own cache line; the waiter count lets the logger skip the futex wake when no responder is
 * blocked in wait_edge().
 */
struct shm_wire final
{
    static constexpr std::uint64_t magic_value = 0x6972716c6f6f7077ull; // "irqloopw"
    static constexpr std::uint32_t layout_version = 1;
    std::uint64_t magic;
    std::uint32_t version;
    alignas(64) std::atomic<std::uint32_t> stimulus;   ///< driven by the logger
    alignas(64) std::atomic<std::uint32_t> response;   ///< driven by the responder
    alignas(64) std::atomic<std::uint32_t> stimulus_waiters;
    std::atomic<std::int32_t> logger_pid;
    std::atomic<std::int32_t> responder_pid;
};

/**
 * @brief A wire in POSIX shared memory, so that a separate process (irqloop-responder) can
 * be the far end. Spec: `shm:name=NAME` (letters, digits, '-', '_'). Either side may create
 * the segment; it stays in /dev/shm after both exit (reuse it, or `unlink=yes` on the logger
 * removes it at the end). `answer=follow` tells the logger that the responder runs with
 * --answer follow (default toggle).
 *
 * The responder side supports wait_edge() through a futex on the stimulus word, which costs
 * the logger one futex wake per edge while a responder waits (an event-mode responder's
 * "interrupt").
 */
class shm_lines final : public lines
{
public:
    shm_lines(const std::string& name, role r, bool unlink_at_end, bool follow = false);
    ~shm_lines() override;

    void drive(bool high) noexcept override;
    int sense() noexcept override { return static_cast<int>(sensed_->load(std::memory_order_acquire)); }
    int wait_edge(std::int64_t timeout_ns) noexcept override;
    bool has_edge_events() const noexcept override { return role_ == role::responder; }
    bool far_end_follows() const noexcept override { return follow_; }
    std::string describe() const override;
    std::vector<metadata_item> metadata() const override;

private:
    std::string name_;
    role role_;
    bool unlink_;
    bool follow_;
    shm_wire* wire_ = nullptr;
    std::atomic<std::uint32_t>* driven_ = nullptr;
    std::atomic<std::uint32_t>* sensed_ = nullptr;
    std::uint32_t last_seen_ = 0; // responder: the stimulus level of the last edge returned
};

std::unique_ptr<lines> open_shm_lines(spec& s, role r);

} // namespace irqloop::hw
