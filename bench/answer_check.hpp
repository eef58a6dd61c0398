// bench/answer_check.hpp: the stdio driver's verdict on every line a server writes back, reached without
// building a JSON tree.
//
// The driver must outrun the fastest server it measures by far, so a whole Boost.JSON document per answer
// (about 4 k instructions, 90 % of the driver's own work) is too dear. The check reads each line once with
// Boost.JSON's SAX parser (so strings, escapes, numbers and nesting are read exactly as a JSON parser reads
// them) and keeps only what the verdict needs: the top-level "jsonrpc", "id", "method", "result" and "error",
// the result's "isError" and its first content block's "text". A server writes the same answer to the same
// request but for the id, so a line that repeats the last good answer's bytes around another integer id gets
// that answer's verdict without a parse (answer_check.cpp says why that verdict is exact). Callgrind, the
// driver against bench_echo_process: 4.6 k instructions per answer in all with the document, 0.67 k now.
//
// A line is one of:
// - an answer: it names, once, an integer id the driver sent that has not been answered yet, and no
//   "method". It settles that request, once. It is good only when it is one JSON object with exactly one
//   "jsonrpc":"2.0", one object "result", no "error", "isError" absent or false, and (when the run expects
//   the echo) a first content block whose "text" is the expected text; duplicates of any of those members
//   make it bad. A line that breaks off after naming its id (truncated, invalid JSON) is a bad answer, so
//   the run does not wait for that request forever.
// - a notification: "jsonrpc":"2.0", a string "method" and no "id". Counted and ignored.
// - bad: anything else: not JSON, not one object, a response to an id never sent or already answered, an
//   id of another type than the integer sent (JSON-RPC 2.0 answers with the same id, so "5" or 5.0 does
//   not answer 5), a request from the server (the driver answers none). Counted; settles nothing.
//
// Not thread-safe: one driver, one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::bench {

enum class line_kind : unsigned char { answer, notification, bad };

struct line_outcome {
    line_kind kind = line_kind::bad;
    bool settles = false; // an answer: it settled the request at `slot`
    std::size_t slot = 0; // the request's id minus the run's first id
    bool good = false;    // an answer that passed every check
};

class answer_check {
public:
    // `expected_text`: what a good answer's first content block carries as "text". `reuse_verdicts`: a line
    // that repeats a good answer's bytes around another id is judged without parsing it again (the same
    // verdict; off only to test that it is).
    explicit answer_check(std::string expected_text, bool reuse_verdicts = true);
    ~answer_check();
    answer_check(answer_check&&) noexcept;
    answer_check& operator=(answer_check&&) noexcept;

    // Starts a run whose requests carry ids first_id, first_id + 1, ... in the order sent; resets the counts.
    // `expect_text`: good answers must echo the text (off for the era's opening request). Bytes of a line
    // begun before are kept: the stream goes on.
    void begin(std::uint64_t first_id, bool expect_text);

    // The run's next request (id first_id + requests sent so far) is in flight.
    void sent() { answered_.push_back(false); }

    // Takes bytes as they were read: checks every line they complete (a line may span any number of reads),
    // keeps the rest, and calls on_settled(slot) for each line that settled a request. Returns how many did.
    template<class OnSettled>
    std::size_t feed(std::string_view bytes, OnSettled&& on_settled);

    // Checks one whole line (without its newline) and counts it.
    line_outcome check_line(std::string_view line);

    // Since begin(): requests settled (well or badly), lines that were bad (including bad answers),
    // notifications.
    std::size_t settled() const noexcept { return settled_; }
    std::size_t bad() const noexcept { return bad_; }
    std::size_t notifications() const noexcept { return notifications_; }
    // Lines judged since construction by the bytes of an earlier good answer, without parsing them.
    std::size_t reused() const noexcept { return reused_; }
    // The first line counted bad since begin() (its first 200 bytes), for the driver's diagnostics.
    std::string const& first_bad_line() const noexcept { return first_bad_line_; }

private:
    line_outcome answer(std::optional<std::uint64_t> id, bool good, std::string_view line);
    void learn_shape(std::string_view line, std::string_view id_text);
    std::optional<std::uint64_t> id_in_good_shape(std::string_view line) const;

    class reader;
    std::unique_ptr<reader> reader_;
    std::string pending_; // a line begun by earlier reads
    std::uint64_t first_id_ = 0;
    bool expect_text_ = true;
    std::vector<bool> answered_; // by slot
    std::size_t settled_ = 0;
    std::size_t bad_ = 0;
    std::size_t notifications_ = 0;
    std::string first_bad_line_;
    bool reuse_verdicts_;
    bool shape_known_ = false;
    std::size_t reused_ = 0;
    std::string shape_head_; // a good answer's bytes before its id
    std::string shape_tail_; // and after it
};

template<class OnSettled>
std::size_t answer_check::feed(std::string_view bytes, OnSettled&& on_settled) {
    std::size_t settled = 0;
    auto const one = [&](std::string_view line) {
        auto const o = check_line(line);
        if (o.settles) {
            ++settled;
            on_settled(o.slot);
        }
    };
    if (!pending_.empty()) {
        auto const nl = bytes.find('\n');
        pending_.append(bytes.substr(0, nl));
        if (nl == std::string_view::npos)
            return 0;
        one(pending_);
        pending_.clear();
        bytes.remove_prefix(nl + 1);
    }
    // Whole lines are checked where they lie in the caller's buffer; only a line's unfinished tail is copied.
    for (auto nl = bytes.find('\n'); nl != std::string_view::npos; nl = bytes.find('\n')) {
        one(bytes.substr(0, nl));
        bytes.remove_prefix(nl + 1);
    }
    pending_.append(bytes);
    return settled;
}

} // namespace duet::bench
