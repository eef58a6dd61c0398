// The gateway's limits (include/duet/gateway/limits.hpp), driven by a clock the tests hold: a token bucket
// starts full, refills continuously up to its burst and says exactly when the next token comes; the rate
// limiter keeps a bucket per key, remembers a bounded number of keys (forgetting full buckets first, then
// the least recently used) and admits exactly the burst however many threads ask at once; the circuit
// breaker opens at exactly N failures in a row, lets one probe through once the backoff ends, closes on a
// success and doubles its backoff up to the bound on each failed probe.
#include <duet/gateway/limits.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <thread>
#include <vector>

// Named, not anonymous: the test files are compiled eight to a unit.
namespace limits_suite {

using duet::gateway::breaker_options;
using duet::gateway::circuit_breaker;
using duet::gateway::limit_clock;
using duet::gateway::rate;
using duet::gateway::rate_limiter;
using duet::gateway::token_bucket;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;
using state = circuit_breaker::state;

// An arbitrary start; tests move from it.
limit_clock::time_point const t0 = limit_clock::time_point{} + hours(1000);

std::optional<milliseconds> const admitted = std::nullopt;

// token_bucket

TEST(TokenBucket, StartsFullAndAdmitsTheBurstAtOnce) {
    token_bucket bucket(rate{1, 3}, t0);
    EXPECT_TRUE(bucket.full(t0));
    EXPECT_EQ(bucket.take(t0), admitted);
    EXPECT_EQ(bucket.take(t0), admitted);
    EXPECT_EQ(bucket.take(t0), admitted);
    EXPECT_EQ(bucket.take(t0), milliseconds(1000));
}

TEST(TokenBucket, EmptyBucketSaysWhenTheNextTokenComes) {
    token_bucket bucket(rate{10, 2}, t0);
    ASSERT_EQ(bucket.take(t0), admitted);
    ASSERT_EQ(bucket.take(t0), admitted);
    EXPECT_EQ(bucket.take(t0), milliseconds(100));
    EXPECT_EQ(bucket.take(t0), milliseconds(100)) << "a refused take takes nothing";
    EXPECT_EQ(bucket.take(t0 + milliseconds(40)), milliseconds(60));
    EXPECT_EQ(bucket.take(t0 + milliseconds(100)), admitted) << "back when told: admitted";
}

TEST(TokenBucket, RetryAfterRoundsUpToWholeMilliseconds) {
    token_bucket bucket(rate{3, 1}, t0);
    ASSERT_EQ(bucket.take(t0), admitted);
    EXPECT_EQ(bucket.take(t0), milliseconds(334)) << "a third of a second, rounded up";
    EXPECT_EQ(bucket.take(t0 + milliseconds(333)), milliseconds(1)) << "a hair short of the token";
    EXPECT_EQ(bucket.take(t0 + milliseconds(334)), admitted);
}

TEST(TokenBucket, RetryAfterIsAtLeastOneMillisecond) {
    token_bucket bucket(rate{1'000'000, 1}, t0);
    ASSERT_EQ(bucket.take(t0), admitted);
    EXPECT_EQ(bucket.take(t0), milliseconds(1)) << "the token comes in a microsecond";
    EXPECT_EQ(bucket.take(t0 + std::chrono::microseconds(1)), admitted);
}

TEST(TokenBucket, RefillsContinuouslyOverTime) {
    token_bucket bucket(rate{2, 4}, t0);
    for (int i = 0; i < 4; ++i)
        ASSERT_EQ(bucket.take(t0), admitted);
    EXPECT_EQ(bucket.take(t0 + milliseconds(250)), milliseconds(250)) << "half a token there";
    EXPECT_EQ(bucket.take(t0 + milliseconds(500)), admitted) << "one token after half a second";
    EXPECT_EQ(bucket.take(t0 + milliseconds(500)), milliseconds(500));
    EXPECT_EQ(bucket.take(t0 + milliseconds(1500)), admitted) << "two tokens a second later";
    EXPECT_EQ(bucket.take(t0 + milliseconds(1500)), admitted);
    EXPECT_EQ(bucket.take(t0 + milliseconds(1500)), milliseconds(500));
}

TEST(TokenBucket, RefillIsCappedAtTheBurst) {
    token_bucket bucket(rate{10, 2}, t0);
    ASSERT_EQ(bucket.take(t0), admitted);
    ASSERT_EQ(bucket.take(t0), admitted);
    auto const much_later = t0 + hours(5);
    EXPECT_EQ(bucket.take(much_later), admitted);
    EXPECT_EQ(bucket.take(much_later), admitted);
    EXPECT_EQ(bucket.take(much_later), milliseconds(100)) << "five hours idle still hold only two tokens";
}

TEST(TokenBucket, FullAgainOnceTheTakenTokensRefilled) {
    token_bucket bucket(rate{4, 2}, t0);
    EXPECT_EQ(bucket.full_at(), t0);
    ASSERT_EQ(bucket.take(t0), admitted);
    ASSERT_EQ(bucket.take(t0), admitted);
    EXPECT_FALSE(bucket.full(t0));
    EXPECT_EQ(bucket.full_at(), t0 + milliseconds(500));
    EXPECT_FALSE(bucket.full(t0 + milliseconds(499)));
    EXPECT_TRUE(bucket.full(t0 + milliseconds(500)));
    EXPECT_TRUE(bucket.full(t0 + hours(1)));
}

TEST(TokenBucket, BurstBelowOneActsAsOne) {
    for (double burst : {0.0, 0.5, -3.0, std::nan("")}) {
        token_bucket bucket(rate{1, burst}, t0);
        EXPECT_EQ(bucket.take(t0), admitted) << "burst " << burst;
        EXPECT_EQ(bucket.take(t0), milliseconds(1000)) << "burst " << burst;
        EXPECT_EQ(bucket.take(t0 + seconds(1)), admitted) << "burst " << burst;
    }
}

TEST(TokenBucket, NoRefillMeansAYearsWaitAndNeverFullAgain) {
    for (double per_second : {0.0, -1.0, std::nan("")}) {
        token_bucket bucket(rate{per_second, 1}, t0);
        ASSERT_EQ(bucket.take(t0), admitted) << "per_second " << per_second;
        EXPECT_EQ(bucket.take(t0 + hours(10000)), milliseconds(hours(24 * 365)))
            << "per_second " << per_second;
        EXPECT_EQ(bucket.full_at(), limit_clock::time_point::max()) << "per_second " << per_second;
        EXPECT_FALSE(bucket.full(t0 + hours(100000))) << "per_second " << per_second;
    }
}

TEST(TokenBucket, AVerySlowRefillSaysAtMostAYear) {
    token_bucket bucket(rate{1e-12, 1}, t0);
    ASSERT_EQ(bucket.take(t0), admitted);
    EXPECT_EQ(bucket.take(t0), milliseconds(hours(24 * 365)));
}

TEST(TokenBucket, AClockGoingBackwardsRefillsNothing) {
    token_bucket bucket(rate{1, 1}, t0);
    ASSERT_EQ(bucket.take(t0), admitted);
    EXPECT_EQ(bucket.take(t0 - seconds(10)), milliseconds(1000));
    EXPECT_EQ(bucket.take(t0 + milliseconds(500)), milliseconds(500)) << "counted from the latest time seen";
}

// rate_limiter

TEST(RateLimiter, EachKeyHasItsOwnBucket) {
    rate_limiter limiter(rate{1, 2});
    EXPECT_EQ(limiter.limit(), (rate{1, 2}));
    EXPECT_EQ(limiter.admit("alice", t0), admitted);
    EXPECT_EQ(limiter.admit("alice", t0), admitted);
    EXPECT_EQ(limiter.admit("alice", t0), milliseconds(1000));
    EXPECT_EQ(limiter.admit("bob", t0), admitted) << "alice's use is not bob's";
    EXPECT_EQ(limiter.admit("alice", t0 + milliseconds(300)), milliseconds(700));
    EXPECT_EQ(limiter.admit("alice", t0 + seconds(1)), admitted);
    EXPECT_EQ(limiter.keys(), 2u);
}

TEST(RateLimiter, RemembersAtMostMaxKeys) {
    rate_limiter limiter(rate{1, 1}, 3);
    for (int i = 0; i < 50; ++i) {
        EXPECT_EQ(limiter.admit("key" + std::to_string(i), t0), admitted) << "a new key starts full";
        EXPECT_LE(limiter.keys(), 3u);
    }
    EXPECT_EQ(limiter.keys(), 3u);
}

TEST(RateLimiter, MaxKeysZeroActsAsOne) {
    rate_limiter limiter(rate{1, 1}, 0);
    EXPECT_EQ(limiter.admit("a", t0), admitted);
    EXPECT_EQ(limiter.admit("a", t0), milliseconds(1000));
    EXPECT_EQ(limiter.keys(), 1u);
    EXPECT_EQ(limiter.admit("b", t0), admitted);
    EXPECT_EQ(limiter.keys(), 1u);
}

TEST(RateLimiter, PastTheBoundForgetsAFullBucketBeforeTheLeastRecentlyUsed) {
    rate_limiter limiter(rate{1, 2}, 3);
    ASSERT_EQ(limiter.admit("a", t0), admitted); // a: empty at t0, full at t0+2s, least recently used
    ASSERT_EQ(limiter.admit("a", t0), admitted);
    ASSERT_EQ(limiter.admit("b", t0 + milliseconds(100)), admitted); // b: full again at t0+1.1s
    ASSERT_EQ(limiter.admit("c", t0 + milliseconds(200)), admitted); // c: empty, full at t0+2.2s
    ASSERT_EQ(limiter.admit("c", t0 + milliseconds(200)), admitted);
    auto const now = t0 + milliseconds(1500);
    EXPECT_EQ(limiter.admit("d", now), admitted);
    EXPECT_EQ(limiter.keys(), 3u);
    // a kept its state (1.5 tokens), and so did c (1.3); a forgotten one would start over with 2.
    EXPECT_EQ(limiter.admit("a", now), admitted);
    EXPECT_EQ(limiter.admit("a", now), milliseconds(500));
    EXPECT_EQ(limiter.admit("c", now), admitted);
    EXPECT_EQ(limiter.admit("c", now), milliseconds(700));
    EXPECT_EQ(limiter.keys(), 3u);
}

TEST(RateLimiter, PastTheBoundForgetsEveryFullBucketAtOnce) {
    rate_limiter limiter(rate{1, 1}, 3);
    ASSERT_EQ(limiter.admit("a", t0), admitted);
    ASSERT_EQ(limiter.admit("b", t0), admitted);
    ASSERT_EQ(limiter.admit("c", t0 + milliseconds(500)), admitted);
    EXPECT_EQ(limiter.admit("d", t0 + seconds(1)), admitted) << "a and b are full again, c is not";
    EXPECT_EQ(limiter.keys(), 2u);
    EXPECT_EQ(limiter.admit("c", t0 + seconds(1)), milliseconds(500)) << "c kept its state";
}

TEST(RateLimiter, WithNoFullBucketForgetsTheLeastRecentlyUsed) {
    rate_limiter limiter(rate{0, 1}, 3); // never refills: no bucket is ever full again
    ASSERT_EQ(limiter.admit("a", t0), admitted);
    ASSERT_EQ(limiter.admit("b", t0 + seconds(1)), admitted);
    ASSERT_EQ(limiter.admit("c", t0 + seconds(2)), admitted);
    ASSERT_TRUE(limiter.admit("a", t0 + seconds(3))) << "refused, and yet a use: b is now the least recent";
    EXPECT_EQ(limiter.admit("d", t0 + seconds(4)), admitted);
    EXPECT_EQ(limiter.keys(), 3u);
    EXPECT_TRUE(limiter.admit("a", t0 + seconds(5))) << "a kept its empty bucket";
    EXPECT_TRUE(limiter.admit("c", t0 + seconds(5))) << "c kept its empty bucket";
    EXPECT_TRUE(limiter.admit("d", t0 + seconds(5)));
    EXPECT_EQ(limiter.admit("b", t0 + seconds(6)), admitted) << "b was forgotten: it starts over";
    EXPECT_EQ(limiter.keys(), 3u) << "and a, then the least recently used, went";
    EXPECT_TRUE(limiter.admit("c", t0 + seconds(7))) << "c stays";
    EXPECT_TRUE(limiter.admit("d", t0 + seconds(7))) << "d stays";
    EXPECT_EQ(limiter.admit("a", t0 + seconds(8)), admitted) << "a starts over";
}

TEST(RateLimiter, ThreadsHammeringOneKeyAdmitExactlyTheBurst) {
    rate_limiter limiter(rate{5, 100});
    std::atomic<int> admissions = 0;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 200; ++i)
                if (!limiter.admit("shared", t0))
                    ++admissions;
        });
    for (auto& thread : threads)
        thread.join();
    EXPECT_EQ(admissions.load(), 100) << "no time passed: the burst, no more, no less";
    EXPECT_EQ(limiter.keys(), 1u);
}

TEST(RateLimiter, ThreadsWithManyKeysStayWithinTheBound) {
    rate_limiter limiter(rate{1, 2}, 16);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&limiter, t] {
            for (int i = 0; i < 500; ++i)
                (void)limiter.admit("t" + std::to_string(t) + "-" + std::to_string(i % 40),
                                    t0 + milliseconds(i));
        });
    for (auto& thread : threads)
        thread.join();
    EXPECT_GE(limiter.keys(), 1u);
    EXPECT_LE(limiter.keys(), 16u);
}

// circuit_breaker

breaker_options options(std::size_t failures, milliseconds first, milliseconds max) {
    breaker_options o;
    o.failures = failures;
    o.first_backoff = first;
    o.max_backoff = max;
    return o;
}

// Fails the probe the open breaker lets through at its retry time; returns the new backoff.
milliseconds fail_the_probe(circuit_breaker& breaker) {
    auto const at = breaker.retry_at();
    EXPECT_TRUE(breaker.allow(at));
    breaker.failed(at);
    return std::chrono::duration_cast<milliseconds>(breaker.retry_at() - at);
}

TEST(CircuitBreaker, OpensExactlyAtNFailuresInARow) {
    circuit_breaker breaker(options(3, seconds(1), seconds(60)));
    EXPECT_EQ(breaker.current(t0), state::closed);
    breaker.failed(t0);
    breaker.failed(t0);
    EXPECT_EQ(breaker.current(t0), state::closed);
    EXPECT_TRUE(breaker.allow(t0));
    EXPECT_EQ(breaker.failures_in_a_row(), 2u);
    breaker.failed(t0 + milliseconds(10));
    EXPECT_EQ(breaker.current(t0 + milliseconds(10)), state::open);
    EXPECT_FALSE(breaker.allow(t0 + milliseconds(10)));
    EXPECT_EQ(breaker.retry_at(), t0 + milliseconds(10) + seconds(1)) << "the first backoff";
    EXPECT_EQ(breaker.failures_in_a_row(), 3u);
}

TEST(CircuitBreaker, OneFailureOpensWhenNIsOne) {
    circuit_breaker breaker(options(1, seconds(1), seconds(60)));
    breaker.failed(t0);
    EXPECT_EQ(breaker.current(t0), state::open);
}

TEST(CircuitBreaker, DefaultsOpenAtFiveFailuresForASecond) {
    circuit_breaker breaker;
    for (int i = 0; i < 4; ++i)
        breaker.failed(t0);
    EXPECT_EQ(breaker.current(t0), state::closed);
    breaker.failed(t0);
    EXPECT_EQ(breaker.current(t0), state::open);
    EXPECT_EQ(breaker.retry_at(), t0 + seconds(1));
}

TEST(CircuitBreaker, ASuccessWhileClosedStartsTheCountOver) {
    circuit_breaker breaker(options(3, seconds(1), seconds(60)));
    breaker.failed(t0);
    breaker.failed(t0);
    breaker.succeeded();
    EXPECT_EQ(breaker.failures_in_a_row(), 0u);
    breaker.failed(t0);
    breaker.failed(t0);
    EXPECT_EQ(breaker.current(t0), state::closed) << "two in a row, not four";
    breaker.failed(t0);
    EXPECT_EQ(breaker.current(t0), state::open);
}

TEST(CircuitBreaker, OpenRefusesUntilTheBackoffEndsThenTurnsHalfOpen) {
    circuit_breaker breaker(options(1, seconds(2), seconds(60)));
    breaker.failed(t0);
    auto const retry = t0 + seconds(2);
    EXPECT_EQ(breaker.current(retry - nanoseconds(1)), state::open);
    EXPECT_FALSE(breaker.allow(t0 + seconds(1)));
    EXPECT_FALSE(breaker.allow(retry - nanoseconds(1)));
    EXPECT_EQ(breaker.current(retry), state::half_open);
    EXPECT_EQ(breaker.current(retry + hours(1)), state::half_open);
}

TEST(CircuitBreaker, HalfOpenLetsExactlyOneProbeThrough) {
    circuit_breaker breaker(options(1, seconds(1), seconds(60)));
    breaker.failed(t0);
    auto const retry = breaker.retry_at();
    EXPECT_TRUE(breaker.allow(retry)) << "the probe";
    EXPECT_FALSE(breaker.allow(retry)) << "others wait for the probe's outcome";
    EXPECT_FALSE(breaker.allow(retry + hours(1)));
    EXPECT_EQ(breaker.current(retry + hours(1)), state::half_open);
}

TEST(CircuitBreaker, TheProbesSuccessClosesAndStartsOver) {
    circuit_breaker breaker(options(2, seconds(1), seconds(60)));
    breaker.failed(t0);
    breaker.failed(t0);
    ASSERT_EQ(fail_the_probe(breaker), seconds(2));
    auto const retry = breaker.retry_at();
    ASSERT_TRUE(breaker.allow(retry));
    breaker.succeeded();
    EXPECT_EQ(breaker.current(retry), state::closed);
    EXPECT_EQ(breaker.failures_in_a_row(), 0u);
    EXPECT_TRUE(breaker.allow(retry));
    EXPECT_TRUE(breaker.allow(retry)) << "closed: every call goes through";
    breaker.failed(retry);
    EXPECT_EQ(breaker.current(retry), state::closed) << "the count starts over";
    breaker.failed(retry);
    EXPECT_EQ(breaker.current(retry), state::open);
    EXPECT_EQ(breaker.retry_at(), retry + seconds(1)) << "and so does the backoff";
}

TEST(CircuitBreaker, EachFailedProbeDoublesTheBackoffUpToTheBound) {
    circuit_breaker breaker(options(1, seconds(1), seconds(5)));
    breaker.failed(t0);
    EXPECT_EQ(breaker.retry_at(), t0 + seconds(1));
    EXPECT_EQ(fail_the_probe(breaker), seconds(2));
    EXPECT_EQ(breaker.current(breaker.retry_at() - nanoseconds(1)), state::open) << "open again";
    EXPECT_FALSE(breaker.allow(breaker.retry_at() - nanoseconds(1)));
    EXPECT_EQ(fail_the_probe(breaker), seconds(4));
    EXPECT_EQ(fail_the_probe(breaker), seconds(5));
    EXPECT_EQ(fail_the_probe(breaker), seconds(5));
}

TEST(CircuitBreaker, ZeroFailuresNeverOpens) {
    circuit_breaker breaker(options(0, seconds(1), seconds(60)));
    for (int i = 0; i < 1000; ++i)
        breaker.failed(t0);
    EXPECT_EQ(breaker.current(t0), state::closed);
    EXPECT_TRUE(breaker.allow(t0));
    EXPECT_EQ(breaker.failures_in_a_row(), 1000u);
}

TEST(CircuitBreaker, AFailureWhileOpenWithNoProbeOutOnlyCounts) {
    circuit_breaker breaker(options(1, seconds(1), seconds(60)));
    breaker.failed(t0);
    breaker.failed(t0 + milliseconds(500)); // a call let through before the breaker opened
    EXPECT_EQ(breaker.retry_at(), t0 + seconds(1)) << "the backoff is not pushed back";
    EXPECT_EQ(breaker.failures_in_a_row(), 2u);
    breaker.failed(t0 + seconds(3)); // half_open, yet no probe went out
    EXPECT_EQ(breaker.current(t0 + seconds(3)), state::half_open);
    EXPECT_EQ(fail_the_probe(breaker), seconds(2)) << "doubled once, by the probe";
}

TEST(CircuitBreaker, ASuccessWhileOpenCloses) {
    circuit_breaker breaker(options(1, seconds(1), seconds(60)));
    breaker.failed(t0);
    breaker.succeeded(); // a call let through before the breaker opened: the upstream answers again
    EXPECT_EQ(breaker.current(t0), state::closed);
    EXPECT_TRUE(breaker.allow(t0));
}

TEST(CircuitBreaker, TheBoundBoundsTheFirstBackoffToo) {
    circuit_breaker breaker(options(1, seconds(10), seconds(3)));
    breaker.failed(t0);
    EXPECT_EQ(breaker.retry_at(), t0 + seconds(3));
    EXPECT_EQ(fail_the_probe(breaker), seconds(3));
}

TEST(CircuitBreaker, ANegativeOrZeroBackoffRetriesAtOnce) {
    circuit_breaker breaker(options(1, milliseconds(-5), milliseconds(-1)));
    breaker.failed(t0);
    EXPECT_EQ(breaker.retry_at(), t0);
    EXPECT_EQ(breaker.current(t0), state::half_open);
    EXPECT_TRUE(breaker.allow(t0));
    EXPECT_FALSE(breaker.allow(t0));
    breaker.failed(t0);
    EXPECT_EQ(breaker.retry_at(), t0) << "zero doubled";
    EXPECT_TRUE(breaker.allow(t0)) << "the next probe";
}

TEST(CircuitBreaker, AnEnormousBackoffSaturatesInsteadOfWrappingAround) {
    circuit_breaker breaker(options(1, milliseconds::max(), milliseconds::max()));
    breaker.failed(t0);
    EXPECT_EQ(breaker.retry_at(), limit_clock::time_point::max());
    EXPECT_FALSE(breaker.allow(t0 + hours(24 * 365 * 100)));
    EXPECT_EQ(breaker.current(t0 + hours(24 * 365 * 100)), state::open);
}

} // namespace limits_suite
