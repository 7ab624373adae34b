// SPDX-License-Identifier: MIT
#pragma once

#include "lines.hpp"
#include "spec.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace irqloop::hw
{

/**
 * @brief The layout of a shared-memory wire (/dev/shm/irqloop-NAME). Each level sits on its
 * own cache line; the waiter count lets the logger skip the futex wake when no responder is
 * blocked in wait_edge().
 */
struct shm_wire final {
    static constexpr std::uint64_t magic_value = 0x6972716c6f6f7077ull; // "irqloopw"
    static constexpr std::uint32_t layout_version = 1;
    std::uint64_t magic;
    std::uint32_t version;
    alignas(64) std::atomic<std::uint32_t> stimulus; ///< driven by the logger
    alignas(64) std::atomic<std::uint32_t> response; ///< driven by the responder
    alignas(64) std::atomic<std::uint32_t> stimulus_waiters;
    std::atomic<std::int32_t> logger_pid;
    std::atomic<std::int32_t> responder_pid;
};

/** @brief What a `shm:` spec says (take_shm_options()). */
struct shm_options final {
    std::string name = "irqloop"; ///< the wire is /dev/shm/irqloop-NAME
    role who = role::logger;
    bool unlink_at_end = false; ///< remove the segment when this side closes
    far_end answers;            ///< default both edges, toggle (the responder's defaults)
};

/**
 * @brief A wire in POSIX shared memory, so that a separate process (irqloop-responder) can
 * be the far end. Spec: `shm:name=NAME` (letters, digits, '-', '_'). Either side may create
 * the segment; the side that created it removes it from /dev/shm when it closes the wire,
 * however the program ends short of SIGKILL (`unlink=yes` has the other side remove it too).
 * Start the responder first: it creates the wire, and logger runs come and go. The far-end keys
 * `edges` and `answer` (see far_end) tell the logger how the responder answers: `answer=follow`
 * when it runs with --answer follow, `edges=rising` with --edge rising.
 *
 * The responder side supports wait_edge() through a futex on the stimulus word, which costs
 * the logger one futex wake per edge while a responder waits (an event-mode responder's
 * "interrupt").
 */
class shm_lines final : public polled_wire, public lines, public edge_waiter
{
public:
    /** @brief Opens (or creates) the segment. @throws irqloop::error on failure. */
    explicit shm_lines(shm_options o);
    ~shm_lines() override;

    void drive(bool high) noexcept override;
    int sense() noexcept override
    {
        return static_cast<int>(sensed_->load(std::memory_order_acquire));
    }
    int wait_edge(std::int64_t timeout_ns) noexcept override;
    bool has_edge_events() const noexcept override { return opt_.who == role::responder; }
    std::string describe() const override;
    std::vector<metadata_item> metadata() const override;

private:
    shm_options opt_;
    bool created_ = false; ///< this side created the segment: it removes it at close
    shm_wire* wire_ = nullptr;
    std::atomic<std::uint32_t>* driven_ = nullptr;
    std::atomic<std::uint32_t>* sensed_ = nullptr;
    std::uint32_t last_seen_ = 0; // responder: the stimulus level of the last edge returned
};

/** @brief Read a `shm:` spec's keys. @throws irqloop::error (exit status 2) on a bad name. */
shm_options take_shm_options(spec& s, role r);

/** @brief The registry's open step: shm_lines(o). */
std::unique_ptr<lines> open_shm_lines(const shm_options& o);

} // namespace irqloop::hw
