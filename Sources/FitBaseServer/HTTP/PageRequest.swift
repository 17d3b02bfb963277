import FitBaseCore
import Foundation

/// The list conventions every list endpoint shares: `limit` 1–100 (default 20), an opaque `cursor`.
enum PageRequest {
    static let defaultLimit = 20
    static let maximumLimit = 100

    /// The requested page size, or a 400 naming `limit`.
    static func limit(_ requested: Int?) throws(Problem) -> Int {
        guard let requested else { return defaultLimit }
        guard (1...maximumLimit).contains(requested) else {
            throw Problem.invalidRequest(
                "limit must be between 1 and \(maximumLimit).", fieldErrors: [.init(field: "limit", message: "must be between 1 and \(maximumLimit)")]
            )
        }
        return requested
    }

    /// Wraps a list's position so clients treat it as opaque (``PageCursor/encode(_:)``).
    static func encodeCursor(_ position: String) -> String {
        PageCursor.encode(position)
    }

    /// The position a cursor wraps (``PageCursor/decode(_:)``); nil when it is not one.
    static func decodeCursor(_ cursor: String) -> String? {
        PageCursor.decode(cursor)
    }

    /// An opaque cursor for lists paged by position (the catalog, history).
    static func cursor(offset: Int) -> String {
        encodeCursor("offset:\(offset)")
    }

    /// The position a ``cursor(offset:)`` names, or a 400 naming `cursor` (also for an offset past
    /// ``PageCursor/maximumPosition``, which a list adds its page's length to).
    static func offset(fromCursor cursor: String) throws(Problem) -> Int {
        guard let offset = PageCursor.number(in: cursor, after: "offset:") else {
            throw Problem.invalidRequest("cursor is not a cursor this list returned.", fieldErrors: [.init(field: "cursor", message: "is not valid")])
        }
        return offset
    }
}

extension CalendarDay {
    /// The day a query parameter names (`from`, `to`), or `nil` when absent; a problem naming `field` when it is not a
    /// date written YYYY-MM-DD.
    static func query(_ text: String?, field: String) throws(Problem) -> CalendarDay? {
        guard let text else { return nil }
        guard let day = CalendarDay(text) else {
            throw Problem.invalidRequest("\(field) must be a date written YYYY-MM-DD.", fieldErrors: [.init(field: field, message: "must be a date written YYYY-MM-DD")])
        }
        return day
    }
}
