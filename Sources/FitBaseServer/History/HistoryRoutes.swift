import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// `GET /v1/history` answered without the generated server (a ``DirectRoute``): the user's own list is the read an app
/// makes most, and `JSONEncoder` writing twenty logs was a fifth of its CPU. The page comes from the same
/// ``HistoryOperations/historyPage(of:from:to:offset:limit:)`` (same rows, same audit) and is written by hand, byte
/// for byte as the generated server's encoder writes it (sorted keys, absent fields left out, RFC 3339 instants); a
/// string with anything to escape is written by that encoder. Requests with a parameter it does not fully
/// understand (unknown, repeated, percent-encoded or invalid) go to the generated handler, which answers them.
extension HistoryOperations {
    /// The routes the history feature answers itself, for ``RoutingTransport``.
    var historyRoutes: [DirectRoute] {
        [DirectRoute(method: .get, path: "/v1/history") { request, _ in try await self.directHistoryPage(request) }]
    }

    private func directHistoryPage(_ request: Request) async throws -> Response? {
        guard DirectRoute.acceptsJSON(request), let query = HistoryQuery(request.uri) else { return nil }
        let caller = try RequestScope.requireCaller()
        let page = try await historyPage(of: caller.user, from: query.from, to: query.to, offset: query.offset, limit: query.limit)
        var body = ByteBuffer()
        body.reserveCapacity(64 + page.logs.count * 360)
        body.writeStaticString(#"{"items":["#)
        for (index, log) in page.logs.enumerated() {
            if index > 0 { body.writeStaticString(",") }
            HistoryJSON.write(log, to: &body)
        }
        body.writeStaticString("]")
        if let cursor = page.nextCursor {
            body.writeStaticString(#","nextCursor":"#)
            HistoryJSON.write(string: cursor, to: &body)
        }
        body.writeStaticString("}")
        return DirectRoute.json(body)
    }
}

/// The parameters of a history listing the direct route takes: each known parameter at most once, in plain form.
private struct HistoryQuery {
    var limit = PageRequest.defaultLimit
    var offset = 0
    var from: CalendarDay?
    var to: CalendarDay?

    init?(_ uri: URI) {
        if let raw = uri.query, raw.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) { return nil }
        var seen: Set<Substring> = []
        for (key, value) in uri.queryParameters {
            guard seen.insert(key).inserted else { return nil }
            switch key {
            case "limit":
                guard let requested = Int(value), let limit = try? PageRequest.limit(requested) else { return nil }
                self.limit = limit
            case "cursor":
                guard let offset = try? PageRequest.offset(fromCursor: String(value)) else { return nil }
                self.offset = offset
            case "from":
                guard let day = CalendarDay(String(value)) else { return nil }
                from = day
            case "to":
                guard let day = CalendarDay(String(value)) else { return nil }
                to = day
            default:
                return nil
            }
        }
    }
}

/// A workout log's wire form (``HistoryWire``) as the generated server's encoder writes it.
enum HistoryJSON {
    static func write(_ log: WorkoutLog, to body: inout ByteBuffer) {
        let wire = HistoryWire.wire(log)
        // Keys in the encoder's sorted order; optional fields only when present.
        body.writeStaticString(#"{"completedAt":"#)
        write(string: InternetDateTime.string(from: wire.completedAt), to: &body)
        if let cycleDay = wire.cycleDay { write(key: "cycleDay", int: cycleDay, to: &body) }
        if let cyclePhase = wire.cyclePhase {
            body.writeStaticString(#","cyclePhase":"#)
            write(string: cyclePhase.rawValue, to: &body)
        }
        write(key: "duration", int: wire.duration, to: &body)
        if let energyAfter = wire.energyAfter { write(key: "energyAfter", int: energyAfter, to: &body) }
        if let energyBefore = wire.energyBefore { write(key: "energyBefore", int: energyBefore, to: &body) }
        body.writeStaticString(#","id":"#)
        write(string: wire.id, to: &body)
        body.writeStaticString(#","localDate":"#)
        write(string: wire.localDate, to: &body)
        if let notes = wire.notes {
            body.writeStaticString(#","notes":"#)
            write(string: notes, to: &body)
        }
        if let rating = wire.rating { write(key: "rating", int: rating, to: &body) }
        body.writeStaticString(#","workoutId":"#)
        write(string: wire.workoutId, to: &body)
        body.writeStaticString(#","workoutTitle":"#)
        write(string: wire.workoutTitle, to: &body)
        body.writeStaticString(#","workoutType":"#)
        write(string: wire.workoutType.rawValue, to: &body)
        body.writeStaticString("}")
    }

    private static func write(key: StaticString, int: Int, to body: inout ByteBuffer) {
        body.writeStaticString(#",""#)
        body.writeStaticString(key)
        body.writeStaticString(#"":"#)
        body.writeString(String(int))
    }

    /// `text` as a JSON string: printable ASCII other than a quote or backslash is written as it is (the encoder
    /// writes it so too); anything else by the generated server's encoder itself, so the bytes cannot differ.
    static func write(string text: String, to body: inout ByteBuffer) {
        if text.utf8.allSatisfy({ (0x20...0x7E).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            body.writeStaticString("\"")
            body.writeString(text)
            body.writeStaticString("\"")
        } else if let encoded = try? DirectRoute.encoder.encode(text) {
            body.writeBytes(encoded)
        } else {
            // A `String` always encodes; written escaped as a last resort rather than dropped.
            body.writeString(AuditChain.jsonString(text))
        }
    }
}
