// SPDX-License-Identifier: MIT
#include "shm-lines.hpp"

#include "error.hpp"

#include <cctype>
#include <cerrno>
#include <ctime>
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace irqloop::hw
{

namespace
{

long futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t val, const timespec* ts)
{
    // Shared between processes: no FUTEX_PRIVATE_FLAG.
    return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, val, ts, nullptr, 0);
}

std::string segment(const std::string& name)
{
    return "/irqloop-" + name;
}

} // namespace

shm_lines::shm_lines(shm_options o) : lines(o.answers), opt_(std::move(o))
{
    const std::string& name = opt_.name;
    const std::string what = "open shared-memory wire '" + name + "'";
    const std::string seg = segment(name);
    // Created here, or opened as the other side left it: a segment this side created is
    // removed again when the wire is refused before it is used (nothing left behind).
    int fd = shm_open(seg.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd >= 0)
        created_ = true;
    else if (errno == EEXIST)
        fd = shm_open(seg.c_str(), O_RDWR, 0600);
    const std::string where = "/dev/shm" + seg;
    const std::string shm_hint = "check /dev/shm (a tmpfs) and its free space";
    if (fd < 0)
        throw_from_errno(errno, what,
                         errno == EACCES
                             ? "another user's wire: remove " + where + " or choose another name"
                             : shm_hint);
    auto refuse = [&](int err, const std::string& why, const std::string& hint) {
        if (fd >= 0)
            close(fd);
        if (created_)
            shm_unlink(seg.c_str());
        if (why.empty())
            throw_from_errno(err, what, hint);
        throw irqloop::error(what, why, hint);
    };
    struct stat st {
    };
    if (fstat(fd, &st) < 0 || (st.st_size == 0 && ftruncate(fd, sizeof(shm_wire)) < 0))
        refuse(errno, {}, shm_hint);
    if (st.st_size != 0 && static_cast<std::size_t>(st.st_size) < sizeof(shm_wire))
        refuse(0, where + " is not an irqloop wire", "remove it or choose another name");
    void* p = mmap(nullptr, sizeof(shm_wire), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    if (p == MAP_FAILED)
        refuse(err, {}, shm_hint);
    close(fd);
    fd = -1;
    wire_ = static_cast<shm_wire*>(p);
    if (wire_->magic == 0) {
        wire_->version = shm_wire::layout_version;
        wire_->magic = shm_wire::magic_value;
    } else if (wire_->magic != shm_wire::magic_value ||
               wire_->version != shm_wire::layout_version) {
        munmap(wire_, sizeof(shm_wire));
        wire_ = nullptr;
        refuse(0, where + " is not an irqloop wire of this version",
               "remove it or choose another name");
    }
    if (opt_.who == role::logger) {
        driven_ = &wire_->stimulus;
        sensed_ = &wire_->response;
        wire_->logger_pid.store(getpid());
    } else {
        driven_ = &wire_->response;
        sensed_ = &wire_->stimulus;
        wire_->responder_pid.store(getpid());
        last_seen_ = sensed_->load();
    }
}

shm_lines::~shm_lines()
{
    if (!wire_)
        return;
    (opt_.who == role::logger ? wire_->logger_pid : wire_->responder_pid).store(0);
    munmap(wire_, sizeof(shm_wire));
    // The side that created the segment removes it on every ending: a normal end, a stop
    // signal (both programs unwind to here), a refusal (issue 32). unlink=yes makes the other
    // side remove it too.
    if (opt_.unlink_at_end || created_)
        shm_unlink(segment(opt_.name).c_str());
}

void shm_lines::drive(bool high) noexcept
{
    driven_->store(high ? 1u : 0u, std::memory_order_release);
    if (opt_.who == role::logger && wire_->stimulus_waiters.load(std::memory_order_acquire) != 0)
        futex(driven_, FUTEX_WAKE, 1, nullptr);
}

int shm_lines::wait_edge(std::int64_t timeout_ns) noexcept
{
    if (opt_.who != role::responder)
        return -1;
    timespec ts{};
    const timespec* tsp = nullptr;
    if (timeout_ns >= 0) {
        ts.tv_sec = timeout_ns / 1000000000;
        ts.tv_nsec = timeout_ns % 1000000000;
        tsp = &ts;
    }
    std::uint32_t now = sensed_->load(std::memory_order_acquire);
    if (now == last_seen_) {
        wire_->stimulus_waiters.fetch_add(1, std::memory_order_acq_rel);
        // The kernel re-checks the word against last_seen_, so an edge that lands between
        // the load above and the wait is not missed.
        long rc = futex(sensed_, FUTEX_WAIT, last_seen_, tsp);
        int err = errno;
        wire_->stimulus_waiters.fetch_sub(1, std::memory_order_acq_rel);
        if (rc < 0 && err != EAGAIN && err != EINTR && err != ETIMEDOUT) {
            fail(err, "wait for the stimulus");
            return -1;
        }
        now = sensed_->load(std::memory_order_acquire);
        if (now == last_seen_)
            return 0;
    }
    last_seen_ = now;
    return 1;
}

std::string shm_lines::describe() const
{
    return "shm:name=" + opt_.name + opt_.answers.keys_unlike(far_end{});
}

std::vector<metadata_item> shm_lines::metadata() const
{
    return {{"shm.segment", "/dev/shm" + segment(opt_.name)}};
}

shm_options take_shm_options(spec& s, role r)
{
    shm_options o;
    o.who = r;
    o.name = s.take_string("name", o.name);
    for (char c : o.name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'))
            throw error("bad backend spec '" + s.text() + "'",
                        "key 'name' may only hold letters, digits, '-' and '_'",
                        "e.g. shm:name=bench1");
    if (o.name.empty())
        throw error("bad backend spec '" + s.text() + "'", "key 'name' is empty",
                    "give the wire a name, e.g. shm:name=bench1");
    // /dev/shm/irqloop-NAME must fit one file name (255 bytes).
    constexpr std::size_t max_name = 200;
    if (o.name.size() > max_name)
        throw error("bad backend spec '" + s.text().substr(0, 40) + "...'",
                    "key 'name' is " + std::to_string(o.name.size()) +
                        " characters long, above the limit of 200",
                    "use a short name such as bench1; the segment is /dev/shm/irqloop-NAME");
    o.unlink_at_end = s.take_bool("unlink", false);
    o.answers = take_far_end(s, o.answers);
    return o;
}

std::unique_ptr<lines> open_shm_lines(const shm_options& o)
{
    return std::make_unique<shm_lines>(o);
}

} // namespace irqloop::hw
