import FitBaseCore
import Foundation

/// How a cache-first read may use the device's copy.
public enum CachePolicy: Sendable, Equatable {
    /// The cached copy while it is fresh (within its time to live); otherwise ask the server, and fall back to the
    /// stale copy when the server cannot be reached. The default for screens appearing.
    case cacheFirst
    /// Ask the server (revalidating the cached copy when the server gave a validator), and fall back to the cached
    /// copy when it cannot be reached. Pull to refresh.
    case revalidate
    /// Never ask the server: the cached copy or ``KitError/Kind/offline``.
    case cacheOnly
}

/// Where a loaded value came from.
public enum LoadSource: Sendable, Equatable {
    /// The server answered just now (or confirmed the cached copy is current).
    case server
    /// The device's copy, within its time to live.
    case cache
    /// The device's copy past its time to live, because the server could not be reached.
    case staleCache
}

/// A value read through a cache, with where it came from, so a screen can say "updated 2 h ago" or "offline".
public struct Loaded<Value: Sendable>: Sendable {
    /// Where the value came from.
    public typealias Source = LoadSource

    /// The value.
    public var value: Value
    /// Where it came from.
    public var source: Source
    /// When the server last gave (or confirmed) it.
    public var fetchedAt: Date

    /// Makes a loaded value.
    public init(_ value: Value, source: Source, fetchedAt: Date) {
        self.value = value
        self.source = source
        self.fetchedAt = fetchedAt
    }

    /// Whether the value may be out of date (it is the stale copy kept offline).
    public var isStale: Bool { source == .staleCache }

    /// The same loading facts around another value.
    public func map<Other: Sendable>(_ transform: (Value) throws -> Other) rethrows -> Loaded<Other> {
        Loaded<Other>(try transform(value), source: source, fetchedAt: fetchedAt)
    }
}

extension Loaded: Equatable where Value: Equatable {}

/// Where a page of a list starts and how long it is.
public struct PageRequest: Sendable, Equatable, Hashable {
    /// The cursor the previous page returned; `nil` for the first page.
    public var cursor: String?
    /// Items per page.
    public var limit: Int

    /// The first page of `limit` items.
    public static func first(_ limit: Int = 20) -> PageRequest { PageRequest(cursor: nil, limit: limit) }

    /// Makes a page request.
    public init(cursor: String? = nil, limit: Int = 20) {
        self.cursor = cursor
        self.limit = limit
    }
}

/// One page of a list and where the next one starts.
public struct Page<Item: Sendable>: Sendable {
    /// The items, in the list's order.
    public var items: [Item]
    /// Pass it as ``PageRequest/cursor`` for the next page; `nil` on the last page.
    public var nextCursor: String?

    /// Makes a page.
    public init(items: [Item], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }

    /// Whether another page follows.
    public var hasMore: Bool { nextCursor != nil }
}

extension Page: Equatable where Item: Equatable {}

/// One point of a chart series: the start of its period (a day or a week) and its value (`nil` when nothing was
/// recorded, so a chart shows a gap instead of a zero).
public struct ChartPoint: Sendable, Equatable, Hashable {
    /// The first day of the period, `YYYY-MM-DD` as a ``CalendarDay``.
    public var day: CalendarDay
    /// The value of the period.
    public var value: Double?
    /// The lower end of the period's range (minimum, diastolic), when the series has one.
    public var low: Double?
    /// The upper end of the period's range (maximum, systolic), when the series has one.
    public var high: Double?

    /// Makes a point.
    public init(day: CalendarDay, value: Double?, low: Double? = nil, high: Double? = nil) {
        self.day = day
        self.value = value
        self.low = low
        self.high = high
    }
}
