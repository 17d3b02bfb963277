import FitBaseCore
import Foundation
import Synchronization

/// Token buckets in this instance's memory, one per account and one per client address in each ``RequestClass``.
///
/// A request takes a token from its account's bucket and from its address's; it is refused when either is empty (and
/// then takes nothing). Buckets refill continuously at their rate up to their capacity.
///
/// The buckets are spread over shards, each behind its own `Mutex`, so concurrent requests rarely wait for one another
/// and no request hops to an actor. Memory is bounded: each shard keeps the buckets touched in its current and its
/// previous generation only. A generation ends when it is as old as the longest refill period (so what it drops had
/// been idle long enough to be full again: nothing is lost) or when it holds half of the shard's share of
/// ``RateLimitConfiguration/maxBuckets`` (a flood of addresses: the least recently seen buckets are forgotten and start
/// full again).
final class RequestRateLimiter: Sendable {
    typealias Rate = RateLimitConfiguration.Rate

    /// Whose bucket.
    enum Subject: Hashable, Sendable {
        case user(UserID)
        case address(String)
    }

    struct Key: Hashable, Sendable {
        let requestClass: RequestClass
        let subject: Subject
    }

    /// A bucket as one request left it.
    struct Reading: Sendable, Equatable {
        let requestClass: RequestClass
        /// Whether the request got a token.
        let allowed: Bool
        let rate: Rate
        /// Whole tokens left.
        let remaining: Int
        /// Seconds until the next token arrives (0 when the bucket is full).
        let secondsUntilToken: Int
    }

    let configuration: RateLimitConfiguration
    private let shards: [Shard]
    private let now: @Sendable () -> UInt64
    private let generationNanoseconds: UInt64
    private let maxBucketsPerGeneration: Int

    /// - Parameter now: a monotonic clock in nanoseconds (tests pass their own).
    init(configuration: RateLimitConfiguration, shards: Int = 16, now: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }) {
        self.configuration = configuration
        self.shards = (0..<max(1, shards)).map { _ in Shard() }
        self.now = now
        let rates = RequestClass.allCases.flatMap { [configuration[$0].perUser, configuration[$0].perAddress] }.compactMap(\.self)
        self.generationNanoseconds = UInt64(max(1, rates.map(\.seconds).max() ?? 1)) * 1_000_000_000
        self.maxBucketsPerGeneration = max(1, configuration.maxBuckets / self.shards.count / 2)
    }

    /// Counts a request of `requestClass` against `user`'s bucket and `address`'s (either may be absent). Returns the
    /// tighter bucket's reading — the refusing one when the request is refused — or `nil` when no bucket applies.
    func admit(_ requestClass: RequestClass, user: UserID?, address: String?) -> Reading? {
        let allowance = configuration[requestClass]
        let userKey = user.map { Key(requestClass: requestClass, subject: .user($0)) }
        var userReading: Reading?
        if let userKey, let rate = allowance.perUser {
            let reading = take(userKey, rate: rate)
            guard reading.allowed else { return reading }
            userReading = reading
        }
        guard let address, let rate = allowance.perAddress else { return userReading }
        let addressReading = take(Key(requestClass: requestClass, subject: .address(address)), rate: rate)
        guard let userReading, let userKey else { return addressReading }
        guard addressReading.allowed else {
            giveBack(userKey, rate: userReading.rate)
            return addressReading
        }
        if addressReading.remaining != userReading.remaining {
            return addressReading.remaining < userReading.remaining ? addressReading : userReading
        }
        return addressReading.secondsUntilToken > userReading.secondsUntilToken ? addressReading : userReading
    }

    /// Buckets held now, in every shard.
    var bucketCount: Int {
        shards.reduce(0) { total, shard in total + shard.state.withLock { $0.current.count + $0.previous.count } }
    }

    /// Takes one token from `key`'s bucket when it has one.
    func take(_ key: Key, rate: Rate) -> Reading {
        let now = self.now()
        let window = UInt64(rate.seconds) * 1_000_000_000
        let interval = window / UInt64(rate.capacity)
        let (allowed, debt) = shard(for: key).state.withLock { state in
            state.rotate(now: now, age: generationNanoseconds, maxCount: maxBucketsPerGeneration)
            if let index = state.current.index(forKey: key) {
                return state.current.values[index].take(now: now, interval: interval, window: window)
            }
            var bucket = state.previous.removeValue(forKey: key) ?? Bucket()
            let outcome = bucket.take(now: now, interval: interval, window: window)
            state.current[key] = bucket
            return outcome
        }
        let remaining = (window - min(debt, window)) / interval
        // The next token comes when the debt falls to the next whole interval below it.
        let wait = debt == 0 ? 0 : debt + (remaining + 1) * interval - window
        return Reading(
            requestClass: key.requestClass, allowed: allowed, rate: rate, remaining: Int(remaining),
            secondsUntilToken: Int((wait + 999_999_999) / 1_000_000_000)
        )
    }

    /// Returns a token taken for a request that was then refused by another bucket.
    private func giveBack(_ key: Key, rate: Rate) {
        let interval = UInt64(rate.seconds) * 1_000_000_000 / UInt64(rate.capacity)
        shard(for: key).state.withLock { state in
            if let index = state.current.index(forKey: key) {
                state.current.values[index].fullAt -= min(interval, state.current.values[index].fullAt)
            }
        }
    }

    private func shard(for key: Key) -> Shard {
        shards[Int(UInt(bitPattern: key.hashValue) % UInt(shards.count))]
    }

    /// A token bucket kept as the instant it will be full again (the generic cell rate algorithm): each request
    /// pushes that instant one `interval` (the window over the capacity) further, and is refused when it would be more
    /// than a `window` away. Whole nanoseconds, so there is no rounding drift; one word per bucket.
    private struct Bucket {
        var fullAt: UInt64 = 0

        /// Takes a token if the bucket holds one; returns whether it did and the bucket's debt afterwards (the
        /// nanoseconds until it is full).
        mutating func take(now: UInt64, interval: UInt64, window: UInt64) -> (allowed: Bool, debt: UInt64) {
            let debt = fullAt > now ? fullAt - now : 0
            guard debt + interval <= window else { return (false, debt) }
            fullAt = now + debt + interval
            return (true, debt + interval)
        }
    }

    private struct Buckets {
        var current: [Key: Bucket] = [:]
        var previous: [Key: Bucket] = [:]
        var generationStart: UInt64?

        mutating func rotate(now: UInt64, age: UInt64, maxCount: Int) {
            guard let start = generationStart else {
                generationStart = now
                return
            }
            guard now >= start + age || current.count >= maxCount else { return }
            previous = current
            current = [:]
            current.reserveCapacity(previous.count)
            generationStart = now
        }
    }

    private final class Shard: Sendable {
        let state = Mutex(Buckets())
    }
}
