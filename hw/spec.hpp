// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace irqloop::hw
{

/**
 * @brief A parsed backend spec: `name[:key=value,key=value...]`.
 *
 * Backends read their keys through the take_*() calls and then call finish(), which refuses
 * keys nobody took. Every error names the backend and the key.
 */
class spec final
{
public:
    /** @throws irqloop::error on a malformed spec (empty name, missing '=', duplicate key). */
    explicit spec(std::string_view text);

    const std::string& name() const noexcept { return name_; }
    const std::string& text() const noexcept { return text_; }
    bool has(std::string_view key) const;
    /** @brief The value of @p key without taking it (finish() still wants it taken). */
    std::optional<std::string> peek(std::string_view key) const;

    /**
     * @brief Give @p key the value @p value unless the spec names it: a caller's own default
     * (the responder's gpiod edge detection), set on the parsed spec, never on its text.
     */
    void set_default(std::string_view key, std::string value);

    std::optional<std::string> take(std::string_view key);
    std::string take_string(std::string_view key, std::string_view fallback);
    std::int64_t take_duration_ns(std::string_view key, std::int64_t fallback);
    double take_number(std::string_view key, double fallback);
    std::uint64_t take_count(std::string_view key, std::uint64_t fallback);
    /** @brief take_duration_ns() refusing a value outside [@p lo_ns, @p hi_ns]. */
    std::int64_t take_duration_ns(std::string_view key, std::int64_t fallback, std::int64_t lo_ns,
                                  std::int64_t hi_ns);
    /** @brief take_count() refusing a value outside [@p lo, @p hi]. */
    std::uint64_t take_count(std::string_view key, std::uint64_t fallback, std::uint64_t lo,
                             std::uint64_t hi);
    bool take_bool(std::string_view key, bool fallback);
    /**
     * @brief Take a key whose value is one of @p choices (the first is not the default unless
     * @p fallback says so): the index of the value given, or of @p fallback when the key is
     * absent. Another value is refused naming the key and every choice; @p what says in the
     * hint what the key chooses ("how the far end answers").
     * @throws irqloop::error (exit status 2) for a value not in @p choices.
     */
    std::size_t take_choice(std::string_view key, std::initializer_list<std::string_view> choices,
                            std::string_view fallback, std::string_view what);

    /** @throws irqloop::error naming the first key that no take_*() consumed. */
    void finish() const;

    /** @brief "backend 'name'" for messages. */
    std::string context() const;

private:
    std::string text_;
    std::string name_;
    std::vector<std::pair<std::string, std::string>> params_;
    std::vector<bool> taken_;
};

} // namespace irqloop::hw
